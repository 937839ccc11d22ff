// A workspace of two folders: two clones of examples/kvlog, both folders
// named `kvlog`, so that their configs also share their names (`kvlog`,
// `kvlog-fixed`) and only their paths tell them apart. The daemon lists the
// configs of both, gives each its own catalog, keeps a sweep's failures,
// diagnostics and lenses with the config that ran it, and puts lenses on
// each folder's own main.go.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { RawPeer, kvlogWorkspace, uri, waitFor } from './raw.mjs';

let peer, one, two;
const SWEEP_MS = 120000;

/** A kvlog copy at `<fresh temporary folder>/kvlog`. */
function kvlogFolder() {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-multiroot-'));
  const folder = path.join(parent, 'kvlog');
  fs.renameSync(kvlogWorkspace('seedfall-multiroot-copy-'), folder);
  return folder;
}

const configsOf = (root) => [path.join(root, 'seedfall.fixed.json'), path.join(root, 'seedfall.json')];
const ask = async (method) => (await peer.request(method, {})).result;
const lensesOf = async (file) => (await peer.request('textDocument/codeLens', { textDocument: { uri: uri(file) } })).result;
const run = (config, seeds) => peer.request('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config, seeds }] }, SWEEP_MS);

before(async () => {
  one = kvlogFolder();
  two = kvlogFolder();
  peer = new RawPeer(path.dirname(one), {});
  const init = await peer.request('initialize', {
    processId: process.pid, rootUri: uri(one), capabilities: {},
    workspaceFolders: [{ uri: uri(one), name: 'one' }, { uri: uri(two), name: 'two' }],
  });
  assert.ok(init.result?.capabilities, JSON.stringify(init));
  peer.notify('initialized', {});
});

after(async () => {
  await peer?.close();
  for (const root of [one, two].filter(Boolean)) fs.rmSync(path.dirname(root), { recursive: true, force: true });
});

test('seedfall/configs lists the configs of both folders', async () => {
  const configs = await ask('seedfall/configs');
  assert.deepEqual(configs.map((c) => c.config), [...configsOf(one), ...configsOf(two)].sort());
  assert.deepEqual(configs.map((c) => c.name).sort(), ['kvlog', 'kvlog', 'kvlog-fixed', 'kvlog-fixed']);
  assert.ok(configs.every((c) => c.error === null), JSON.stringify(configs));
});

test('seedfall/properties gives each config the catalog of its own folder', async () => {
  const all = await ask('seedfall/properties');
  assert.equal(all.length, 4);
  for (const root of [one, two]) {
    for (const config of configsOf(root)) {
      const c = all.find((x) => x.config === config);
      assert.ok(c, `${config} in ${JSON.stringify(all.map((x) => x.config))}`);
      assert.equal(c.last_run, null, 'no sweep has run');
      assert.deepEqual(c.catalog.map((p) => p.message).sort(), ['acknowledged writes survive crashes', 'the client finished its writes']);
      assert.ok(c.catalog.every((p) => p.source.file === path.join(root, 'main.go')), JSON.stringify(c.catalog));
    }
  }
});

test('a sweep in one folder: its failures, diagnostics and lenses stay with its config; the other folder gets lenses of its own sweep', async () => {
  const failing = path.join(one, 'seedfall.json');
  const sweep = await run(failing, '55-65');
  assert.equal(sweep.result?.exit, 1, `the sweep finds the bug: ${JSON.stringify(sweep).slice(0, 500)}`);

  const failures = await ask('seedfall/failures');
  assert.ok(failures.length > 0, 'the sweep kept failure folders');
  assert.deepEqual([...new Set(failures.map((f) => f.config))], [failing], 'only the config that ran has failures');
  assert.ok(failures.every((f) => f.folder.startsWith(path.join(one, '.seedfall', 'failures') + path.sep)), JSON.stringify(failures.map((f) => f.folder)));
  assert.ok(failures.every((f) => f.source.file === path.join(one, 'main.go')), JSON.stringify(failures.map((f) => f.source)));
  assert.equal(fs.existsSync(path.join(two, '.seedfall', 'failures')), false, 'nothing was written in the other folder');

  const failuresFound = () => peer.messages.filter(([, m]) => m.method === 'seedfall/failureFound');
  const found = await waitFor(() => failuresFound().length > 0 && failuresFound(), 10000, 'seedfall/failureFound');
  assert.ok(found.every(([, m]) => m.params.config === failing), JSON.stringify(found.map(([, m]) => m.params.config)));
  const published = peer.messages.filter(([, m]) => m.method === 'textDocument/publishDiagnostics' && m.params.diagnostics.length > 0).map(([, m]) => m.params.uri);
  assert.deepEqual([...new Set(published)], [uri(path.join(one, 'main.go'))], 'a diagnostic on the failing folder\'s main.go only');

  // A passing sweep in the other folder: lenses there, its failures still none.
  const passing = path.join(two, 'seedfall.fixed.json');
  const fixed = await run(passing, '1-5');
  assert.equal(fixed.result?.exit, 0, `the fixed program passes: ${JSON.stringify(fixed).slice(0, 500)}`);
  assert.deepEqual([...new Set((await ask('seedfall/failures')).map((f) => f.config))], [failing]);

  const onOne = await lensesOf(path.join(one, 'main.go'));
  const replay = onOne.find((l) => l.command.title.startsWith('Replay seed'));
  assert.ok(replay, JSON.stringify(onOne));
  assert.equal(replay.command.arguments[0].config, failing);
  assert.ok(onOne.some((l) => /^hit in \d+\/11 runs, false in [1-9]\d*$/.test(l.command.title)), JSON.stringify(onOne.map((l) => l.command.title)));

  const onTwo = await lensesOf(path.join(two, 'main.go'));
  const titles = onTwo.map((l) => l.command.title);
  assert.ok(titles.some((t) => /^hit in \d+\/5 runs, false in 0$/.test(t)), JSON.stringify(titles));
  assert.ok(!titles.some((t) => t.startsWith('Replay seed')), 'no failure lens in the folder whose sweep passed');

  // Each config's own actions on its own file.
  for (const config of [...configsOf(one), ...configsOf(two)]) {
    const run = (await lensesOf(config)).find((l) => l.command.command === 'seedfall.run');
    assert.equal(run?.command.arguments[0].config, config);
  }
});
