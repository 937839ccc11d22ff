// What the editor's Testing view is built from (extension/src/testmodel.ts):
// the daemon lists a config's properties from its Go sources before any
// run, at their lines; follows an edit of the source; and after a real
// sweep the last run's counts and the failures sit on the same properties.
// Also an exploration bounded by a wall-time budget instead of rounds.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import os from 'node:os';
import { RawPeer, kvlogWorkspace, repo, sleep } from './raw.mjs';

let peer;
after(async () => peer?.close());

async function until(ask, ms, what) {
  for (const t0 = Date.now(); Date.now() - t0 < ms; await sleep(100)) {
    const v = await ask();
    if (v) return v;
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what}`);
}

const lineOf = (file, needle) => fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(needle)) + 1;

test('properties from the sources before any run, then from the sweep, with its failures at the same lines', async () => {
  const ws = kvlogWorkspace('seedfall-testing-');
  const mainGo = path.join(ws, 'main.go');
  const config = path.join(ws, 'seedfall.json');
  peer = new RawPeer(ws, {});
  await peer.initialize();

  const before = (await peer.request('seedfall/properties', {})).result.find((c) => c.config === config);
  assert.equal(before.last_run, null, 'no sweep has run');
  const listed = before.catalog.map((p) => `${p.node} ${p.kind} ${p.message} ${path.basename(p.source.file)}:${p.source.line}`).sort();
  assert.deepEqual(listed, [
    `kv always acknowledged writes survive crashes main.go:${lineOf(mainGo, '"acknowledged writes survive crashes"')}`,
    `kv reachable the client finished its writes main.go:${lineOf(mainGo, '"the client finished its writes"')}`,
  ]);
  assert.equal(before.catalog[0].source.file.startsWith(ws + '/'), true, 'absolute, under the workspace');

  // A property added to the source is listed once the file is saved.
  const text = fs.readFileSync(mainGo, 'utf8');
  const added = text.replace('\tsim.Reachable("the client finished its writes", nil)', '\tsim.Reachable("the client finished its writes", nil)\n\tsim.Sometimes(next > 3, "the client wrote more than three keys", nil)');
  assert.notEqual(added, text, 'the edit applies');
  fs.writeFileSync(mainGo, added);
  const withNew = await until(async () => {
    const all = (await peer.request('seedfall/properties', {})).result;
    return all.find((c) => c.config === config)?.catalog.find((p) => p.message === 'the client wrote more than three keys');
  }, 20000, 'the new property listed');
  assert.equal(withNew.kind, 'sometimes');
  assert.equal(withNew.source.line, lineOf(mainGo, '"the client wrote more than three keys"'));
  fs.writeFileSync(mainGo, text);

  const sweep = await peer.request('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config, seeds: '55-65' }] }, 120000);
  assert.equal(sweep.result.exit, 1, JSON.stringify(sweep));
  const after = (await peer.request('seedfall/properties', {})).result.find((c) => c.config === config);
  assert.equal(after.last_run.seeds, '55-65');
  const always = after.last_run.properties.find((p) => p.message === 'acknowledged writes survive crashes');
  assert.ok(always.runs_false > 0, JSON.stringify(always));
  const failures = (await peer.request('seedfall/failures', {})).result.filter((f) => f.config === config);
  assert.ok(failures.length > 0);
  const fromCatalog = after.catalog.find((p) => p.message === always.message);
  assert.deepEqual(failures[0].source, fromCatalog.source, 'the failure is at the line the sources listed');
  assert.equal(always.source.file, fromCatalog.source.file);
});

test('explore with a wall-time budget and no rounds ends on its budget', async () => {
  const config = (await peer.request('seedfall/configs', {})).result.find((c) => c.config.endsWith('/seedfall.fixed.json')).config;
  const t0 = Date.now();
  const r = await peer.request('workspace/executeCommand', { command: 'seedfall.explore', arguments: [{ config, budget: '3s' }] }, 120000);
  const rounds = r.result.result.rounds;
  assert.ok(Array.isArray(rounds) && rounds.length > 1, JSON.stringify(r).slice(0, 500));
  assert.ok(Date.now() - t0 < 60000, 'the budget bounds it');
});

test('completion offers the node names inside a fault\'s nodes, on the text being typed', async () => {
  const config = (await peer.request('seedfall/configs', {})).result.find((c) => c.config.endsWith('/seedfall.json')).config;
  const typed = JSON.stringify({ version: 1, duration: '3s', nodes: [{ name: 'kv', go: { dir: '.' } }, { name: 'peer', replicas: 2, go: { dir: '.' } }], faults: { partition: { rate: 1, duration: '10ms', nodes: ['k'] } } }, null, 2);
  peer.notify('textDocument/didOpen', { textDocument: { uri: pathToFileURL(config).toString(), languageId: 'json', version: 1, text: typed } });
  const lines = typed.split('\n');
  const line = lines.findIndex((l) => l.includes('"k"'));
  const character = lines[line].indexOf('"k"') + 2; // after the k
  const r = await peer.request('textDocument/completion', { textDocument: { uri: pathToFileURL(config).toString() }, position: { line, character } });
  assert.deepEqual(r.result.map((i) => i.label), ['kv', 'peer']);
  assert.deepEqual(r.result[0].textEdit, { range: { start: { line, character: character - 1 }, end: { line, character } }, newText: 'kv' });
  // Elsewhere in the config (the rate), nothing.
  const rateLine = lines.findIndex((l) => l.includes('"rate"'));
  const none = await peer.request('textDocument/completion', { textDocument: { uri: pathToFileURL(config).toString() }, position: { line: rateLine, character: lines[rateLine].length - 1 } });
  assert.deepEqual(none.result, []);
  peer.notify('textDocument/didClose', { textDocument: { uri: pathToFileURL(config).toString() } });
});

test("a Rust node's properties are listed from its crate's sources before any build, and follow an edit", async () => {
  // examples/explore's Rust client, copied without its build output.
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-testing-rust-'));
  fs.cpSync(path.join(repo, 'examples/explore/rust/src'), path.join(ws, 'rust/src'), { recursive: true });
  fs.copyFileSync(path.join(repo, 'examples/explore/rust/Cargo.toml'), path.join(ws, 'rust/Cargo.toml'));
  fs.copyFileSync(path.join(repo, 'examples/explore/seedfall.rust.json'), path.join(ws, 'seedfall.json'));
  const mainRs = path.join(ws, 'rust/src/main.rs');
  const config = path.join(ws, 'seedfall.json');
  const rust = new RawPeer(ws, {});
  try {
    await rust.initialize();
    const catalog = async () => (await rust.request('seedfall/properties', {})).result.find((c) => c.config === config)?.catalog ?? [];
    const listed = (await catalog()).map((p) => `${p.node} ${p.kind} ${p.message} ${path.relative(ws, p.source.file)}:${p.source.line}`);
    assert.deepEqual(listed, [`client unreachable the vault opened after 6 consecutive lucky draws rust/src/main.rs:${lineOf(mainRs, '"the vault opened after')}`]);
    assert.equal(fs.existsSync(path.join(ws, 'rust/target')), false, 'nothing was built');
    const text = fs.readFileSync(mainRs, 'utf8');
    const edited = text.replace('seedfall::assert_unreachable!(', 'seedfall::reachable!("the client started");\n    seedfall::assert_unreachable!(');
    assert.notEqual(edited, text, 'the edit applies');
    fs.writeFileSync(mainRs, edited);
    const added = await until(async () => (await catalog()).find((p) => p.message === 'the client started'), 20000, 'the new Rust property listed');
    assert.equal(added.kind, 'reachable');
    assert.equal(added.source.line, lineOf(mainRs, '"the client started"'));
  } finally {
    await rust.close();
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
