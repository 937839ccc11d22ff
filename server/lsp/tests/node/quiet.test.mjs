// The daemon speaks only when something changed. On a copy of
// examples/kvlog after a 50-seed sweep, it counts every message the daemon
// sends: at start-up one publish (the failure at its line) and no lens
// refresh; nothing in 10 idle seconds; after one more sweep, one publish and
// one refresh; then nothing again. Started with `--stdio`, as
// vscode-languageclient starts it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { RawPeer, bin, env, kvlogWorkspace, sleep, uri, waitFor } from './raw.mjs';

let ws, peer;
const publishes = (since) => peer.messages.filter(([t, m]) => t >= since && m.method === 'textDocument/publishDiagnostics');

before(async () => {
  ws = kvlogWorkspace('seedfall-quiet-');
  const sweep = spawnSync(bin, ['run', '-c', path.join(ws, 'seedfall.json'), '-seeds', '1-50'], { env, cwd: ws });
  assert.equal(sweep.status, 1, `the sweep finds the bug: ${sweep.stderr}`);
  peer = new RawPeer(ws, {
    args: ['lsp', '--stdio'],
    capabilities: { workspace: { codeLens: { refreshSupport: true } }, window: { workDoneProgress: true } },
  });
  const init = await peer.initialize();
  assert.ok(init.result.capabilities.codeLensProvider, JSON.stringify(init));
});

after(async () => peer.close());

test('start-up: one publish (the failure), no lens refresh; then 10 idle seconds of silence', async () => {
  const mainGo = path.join(ws, 'main.go');
  await waitFor(() => publishes(0).length >= 1, 10000, 'the start-up publish');
  await sleep(1000);
  const startup = publishes(0);
  assert.deepEqual(startup.map(([, m]) => m.params.uri), [uri(mainGo)], 'only main.go has diagnostics');
  assert.equal(startup[0][1].params.diagnostics.length, 1);
  assert.match(startup[0][1].params.diagnostics[0].message, /acknowledged writes survive crashes .*\(seed 17 and \d+ more seeds/);
  assert.equal(peer.count('workspace/codeLens/refresh'), 0, 'no lens refresh at start-up');
  const t = peer.now();
  await sleep(10000);
  const idle = peer.messages.filter(([at]) => at >= t).map(([, m]) => m.method ?? `response ${m.id}`);
  console.log(`# messages in 10 idle seconds: ${idle.length}`);
  assert.deepEqual(idle, [], 'nothing at all in 10 idle seconds');
});

test('opening and asking for lenses publishes nothing', async () => {
  const mainGo = path.join(ws, 'main.go');
  const t = peer.now();
  peer.notify('textDocument/didOpen', { textDocument: { uri: uri(mainGo), languageId: 'go', version: 1, text: '' } });
  const lenses = await peer.request('textDocument/codeLens', { textDocument: { uri: uri(mainGo) } });
  const titles = lenses.result.map((l) => l.command.title);
  assert.ok(titles.includes('Replay seed 17'), titles.join(' | '));
  await sleep(1000);
  assert.equal(publishes(t).length, 0);
  assert.equal(peer.count('workspace/codeLens/refresh', t), 0);
});

test('one sweep: exactly one publish and one lens refresh, then silence', async () => {
  const mainGo = path.join(ws, 'main.go');
  const t = peer.now();
  const r = await peer.request('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config: path.join(ws, 'seedfall.json'), seeds: '1-80' }], workDoneToken: 'sweep' }, 60000);
  assert.equal(r.result.exit, 1, JSON.stringify(r));
  await sleep(3000);
  const after = publishes(t);
  assert.deepEqual(after.map(([, m]) => m.params.uri), [uri(mainGo)], 'one publish, for main.go');
  assert.match(after[0][1].params.diagnostics[0].message, /\(seed 62 and \d+ more seeds/);
  assert.notDeepEqual(after[0][1].params.diagnostics, publishes(0)[0][1].params.diagnostics, 'the published content changed');
  assert.equal(peer.count('workspace/codeLens/refresh', t), 1, 'one lens refresh');
  const t2 = peer.now();
  await sleep(5000);
  assert.deepEqual(peer.messages.filter(([at]) => at >= t2).map(([, m]) => m.method), [], 'silence after the sweep');
});
