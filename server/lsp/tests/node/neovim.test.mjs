// One headless Neovim (Debian's 0.7, vim.lsp.start_client) receives the
// failure diagnostic from `seedfall lsp`: any LSP client gets what VS Code
// gets. Then 10 idle seconds: the daemon published once and refreshed
// nothing, since nothing changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');

test('neovim shows the failure at its line', { skip: spawnSync('nvim', ['--version']).status !== 0 ? 'nvim is not installed' : false }, () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-nvim-'));
  for (const f of ['main.go', 'go.mod']) fs.copyFileSync(path.join(repo, 'examples/ledger', f), path.join(ws, f));
  fs.writeFileSync(path.join(ws, 'seedfall.json'), JSON.stringify({ duration: '10s', nodes: [{ name: 'bank', go: { dir: '.' } }] }));
  const env = { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache'), SEEDFALL_BIN: bin, WS: ws, OUT: path.join(ws, 'nvim.out') };
  const sweep = spawnSync(bin, ['run', '-c', path.join(ws, 'seedfall.json'), '-seeds', '1-20'], { env });
  assert.equal(sweep.status, 1, 'the sweep finds the bug');
  const r = spawnSync('nvim', ['--headless', '-u', 'NONE', '-c', `luafile ${path.join(here, 'neovim.lua')}`], { env, timeout: 90000 });
  const out = fs.readFileSync(env.OUT, 'utf8');
  const panicLine = fs.readFileSync(path.join(ws, 'main.go'), 'utf8').split('\n').findIndex((l) => l.includes('panic(fmt.Sprintf("account'));
  assert.match(out, new RegExp(`^ok ${panicLine} 1 0 bank: account \\d overdrawn`), `want: the failure at line ${panicLine}, 1 publish, 0 refreshes; got: ${out}\n${r.stderr}`);
});
