// A workspace moved (or cloned) with its .seedfall/ keeps its diagnostics
// and lenses at the right place: records hold paths relative to the config.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { RawPeer, bin, env, kvlogWorkspace, uri, waitFor } from './raw.mjs';

let peer;
after(async () => peer?.close());

test('a moved workspace points its failure at its own main.go', async () => {
  const first = kvlogWorkspace('seedfall-moved-');
  const sweep = spawnSync(bin, ['run', '-c', path.join(first, 'seedfall.json'), '-seeds', '1-20'], { env, cwd: first });
  assert.equal(sweep.status, 1, String(sweep.stderr));
  // Same folder name (the config's default name), another parent.
  const elsewhere = fs.mkdtempSync(`${first}-elsewhere-`);
  const moved = path.join(elsewhere, path.basename(first));
  fs.renameSync(first, moved);
  peer = new RawPeer(moved, {});
  await peer.initialize();
  const mainGo = path.join(moved, 'main.go');
  const pub = await waitFor(() => peer.messages.find(([, m]) => m.method === 'textDocument/publishDiagnostics'), 10000, 'a publish');
  assert.equal(pub[1].params.uri, uri(mainGo));
  const lenses = await peer.request('textDocument/codeLens', { textDocument: { uri: uri(mainGo) } });
  const replay = lenses.result.find((l) => l.command.title.startsWith('Replay seed'));
  assert.ok(replay, JSON.stringify(lenses.result));
  assert.ok(replay.command.arguments[0].faults.startsWith(moved + '/'), replay.command.arguments[0].faults);
  const failures = await peer.request('seedfall/failures', {});
  assert.equal(failures.result[0].source.file, mainGo);
});
