// Drives `seedfall lsp` over stdio with vscode-languageserver-protocol (the
// protocol layer of VS Code's own client), on a copy of examples/ledger:
// diagnostics after a real failing sweep, lenses, executeCommand, progress
// with cancel, the custom requests, reactions to files changed on disk, and
// robustness. Prints the latency figures; asserts behaviour only.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as rpc from 'vscode-languageserver-protocol/node';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');
const env = { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache') };

let ws, proc, conn;
const diagnostics = new Map(); // uri -> diagnostics
const notes = []; // [method, params]
const progress = []; // $/progress params

function waitFor(pred, ms = 30000, what = 'condition') {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      const v = pred();
      if (v) return resolve(v);
      if (Date.now() - t0 > ms) return reject(new Error(`timed out waiting for ${what}; diagnostics for: ${JSON.stringify([...diagnostics].map(([u, d]) => [u, d.length]))}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

const uri = (p) => pathToFileURL(p).toString();
const diagsOf = (p) => diagnostics.get(uri(p)) || [];

before(async () => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-lsp-'));
  for (const f of ['main.go', 'go.mod']) fs.copyFileSync(path.join(repo, 'examples/ledger', f), path.join(ws, f));
  fs.writeFileSync(path.join(ws, 'seedfall.json'), JSON.stringify({ version: 1, duration: '10s', nodes: [{ name: 'bank', go: { dir: '.' } }] }, null, 2));
  proc = spawn(bin, ['lsp'], { cwd: ws, env, stdio: ['pipe', 'pipe', 'inherit'] });
  conn = rpc.createProtocolConnection(new rpc.StreamMessageReader(proc.stdout), new rpc.StreamMessageWriter(proc.stdin));
  conn.onNotification('textDocument/publishDiagnostics', (p) => diagnostics.set(p.uri, p.diagnostics));
  conn.onNotification('$/progress', (p) => progress.push(p));
  conn.onNotification((method, params) => notes.push([method, params]));
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onRequest('workspace/codeLens/refresh', () => null);
  conn.listen();
  const init = await conn.sendRequest('initialize', { processId: process.pid, rootUri: uri(ws), workspaceFolders: [{ uri: uri(ws), name: 'ws' }], capabilities: { window: { workDoneProgress: true } } });
  assert.deepEqual(init.capabilities.executeCommandProvider.commands.slice(0, 2), ['seedfall.run', 'seedfall.explore']);
  conn.sendNotification('initialized', {});
  // A workspace without problems gets no publish at all: the log line says the daemon is ready.
  await waitFor(() => notes.some(([m, p]) => m === 'window/logMessage' && /watching 1 config/.test(p.message)), 10000, 'the daemon watching');
});

after(async () => {
  // A daemon that already went away must not hang the test run.
  const soon = new Promise((resolve) => setTimeout(resolve, 3000).unref());
  try { await Promise.race([conn.sendRequest('shutdown'), soon]); } catch {}
  try { await conn.sendNotification('exit'); } catch {}
  await new Promise((resolve) => setTimeout(resolve, 100));
  conn.dispose();
  proc.kill('SIGKILL');
});

test('a config error is a diagnostic at its JSON path, as the user types', async () => {
  const cfg = path.join(ws, 'seedfall.json');
  const bad = '{\n  "duration": "10s",\n  "nodes": [ { "name": "bank", "replica": 2, "go": { "dir": "." } } ]\n}';
  conn.sendNotification('textDocument/didOpen', { textDocument: { uri: uri(cfg), languageId: 'json', version: 1, text: bad } });
  const d = await waitFor(() => diagsOf(cfg).find((x) => x.message.includes('replica')), 10000, 'config diagnostic');
  assert.equal(d.severity, 1);
  assert.match(d.message, /\$\.nodes\[0\]\.replica: unknown field "replica" \(did you mean "replicas"\?\)/);
  assert.deepEqual(d.range.start, { line: 2, character: 31 });
  conn.sendNotification('textDocument/didChange', { textDocument: { uri: uri(cfg), version: 2 }, contentChanges: [{ text: fs.readFileSync(cfg, 'utf8') }] });
  await waitFor(() => diagsOf(cfg).length === 0, 10000, 'config diagnostic cleared');
  conn.sendNotification('textDocument/didClose', { textDocument: { uri: uri(cfg) } });
});

test('a sweep run through the daemon reports progress and puts the failure at its line', async () => {
  const result = await conn.sendRequest('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config: path.join(ws, 'seedfall.json'), seeds: '1-40' }], workDoneToken: 'sweep-1' });
  assert.equal(result.exit, 1);
  assert.ok(result.result.failures.length > 0);
  const mine = progress.filter((p) => p.token === 'sweep-1').map((p) => p.value.kind);
  assert.equal(mine[0], 'begin');
  assert.ok(mine.includes('report'));
  assert.equal(mine[mine.length - 1], 'end');
  const mainGo = path.join(ws, 'main.go');
  const panicLine = fs.readFileSync(mainGo, 'utf8').split('\n').findIndex((l) => l.includes('panic(fmt.Sprintf("account'));
  const d = await waitFor(() => diagsOf(mainGo).find((x) => x.severity === 1), 10000, 'failure diagnostic');
  assert.equal(d.range.start.line, panicLine);
  assert.match(d.message, /^bank: account \d overdrawn: .* \(seed \d+/);
  assert.match(d.message, /t=\d+\.\d{6}ms/);
  assert.ok(d.relatedInformation.some((r) => r.location.uri.endsWith('faults.json')));
  assert.ok(d.relatedInformation.some((r) => r.location.uri.endsWith('trace.jsonl')));
});

test('lenses: counts and actions on the failing line, sweep actions on the config', async () => {
  const mainGo = path.join(ws, 'main.go');
  const lenses = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: uri(mainGo) } });
  const titles = lenses.map((l) => l.command.title);
  assert.ok(titles.some((t) => /^Replay seed \d+$/.test(t)), titles.join(' | '));
  for (const t of ['Shrink', 'Inspect', 'Pin']) assert.ok(titles.includes(t), t);
  const cfgLenses = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: uri(path.join(ws, 'seedfall.json')) } });
  const ct = cfgLenses.map((l) => l.command.title);
  for (const t of ['Run sweep', 'Explore', 'Stop']) assert.ok(ct.includes(t), t);
  assert.ok(ct.some((t) => t.startsWith('last sweep: seeds 1-40, 40 runs')), ct.join(' | '));
  const replay = lenses.find((l) => l.command.title.startsWith('Replay'));
  const r = await conn.sendRequest('workspace/executeCommand', { command: replay.command.command, arguments: replay.command.arguments });
  assert.equal(r.verdict, 'fail');
  assert.match(r.text, /^FAIL seed \d+ at t=/m, 'the replay answers with what it printed');
});

test('cause answers with what it printed: the faults it tested, the chart, the window', async () => {
  const failures = await conn.sendRequest('seedfall/failures', {});
  const r = await conn.sendRequest('workspace/executeCommand', { command: 'seedfall.cause', arguments: [{ config: path.join(ws, 'seedfall.json'), seed: failures[0].seed }] });
  assert.equal(r.exit, 0);
  assert.match(r.text, /^faults: none before the failure; it does not depend on faults$/m, 'the ledger needs no fault');
  assert.match(r.text, /^branched at 16 moments x 8 children \(128 runs\)/m);
  assert.match(r.text, /^(became certain between|became likely between|no moment made the failure likely)/m);
});

test('custom requests feed rich clients', async () => {
  const failures = await conn.sendRequest('seedfall/failures', {});
  assert.ok(failures.length > 0);
  assert.ok(failures[0].source.file.endsWith('main.go'));
  const props = await conn.sendRequest('seedfall/properties', {});
  assert.equal(props[0].last_run.seeds, '1-40');
  const corpus = await conn.sendRequest('seedfall/corpus', {});
  assert.ok(Array.isArray(corpus[0].entries));
  const timeline = await conn.sendRequest('seedfall/timeline', { config: path.join(ws, 'seedfall.json'), seed: failures[0].seed });
  assert.ok(timeline.some((e) => e.event === 'failure'));
  const rounds = await conn.sendRequest('seedfall/rounds', {});
  assert.ok(Array.isArray(rounds));
});

test('explore in the background sends rounds; codeLens stays fast meanwhile', async () => {
  const cfg = path.join(ws, 'seedfall.json');
  const running = conn.sendRequest('workspace/executeCommand', { command: 'seedfall.explore', arguments: [{ config: cfg, rounds: 6 }], workDoneToken: 'explore-1' });
  await waitFor(() => notes.some(([m]) => m === 'seedfall/roundFinished'), 30000, 'a round');
  const times = [];
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: uri(path.join(ws, 'main.go')) } });
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(`# codeLens while exploring: ${times.map((t) => t.toFixed(2)).join(', ')} ms`);
  const r = await running;
  assert.ok(r.result.rounds.length >= 1);
  assert.ok(notes.some(([m, p]) => m === 'seedfall/status' && String(p.message).startsWith('exploring: round')));
  const rounds = await conn.sendRequest('seedfall/rounds', {});
  assert.ok(rounds[0].rounds.length >= 1);
});

test('a long sweep is cancelled from the progress cancel button', async () => {
  const running = conn.sendRequest('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config: path.join(ws, 'seedfall.json'), seeds: '1-200000' }], workDoneToken: 'long-1' });
  await waitFor(() => progress.some((p) => p.token === 'long-1' && p.value.kind === 'report'), 30000, 'progress report');
  for (let i = 0; i < 20; i++) conn.sendNotification('window/workDoneProgress/cancel', { token: 'long-1' }); // a cancel storm
  const r = await running;
  assert.deepEqual(r, { cancelled: true });
  assert.ok(progress.some((p) => p.token === 'long-1' && p.value.kind === 'end'));
});

test('changes on disk: a failure folder appearing and disappearing', async () => {
  const failuresDir = path.join(ws, '.seedfall/failures');
  const folders = fs.readdirSync(failuresDir).filter((f) => !f.startsWith('.'));
  const src = path.join(failuresDir, folders[0]);
  const summary = JSON.parse(fs.readFileSync(path.join(src, 'summary.json'), 'utf8'));
  // A failure written by someone else (a CLI in a terminal): a copy as seed 999999.
  summary.seed = 999999;
  const dst = path.join(failuresDir, folders[0].replace(/-seed-\d+-/, '-seed-999999-'));
  const tmp = path.join(failuresDir, '.tmp-copy');
  fs.mkdirSync(tmp, { recursive: true });
  for (const f of fs.readdirSync(src)) if (fs.statSync(path.join(src, f)).isFile()) fs.copyFileSync(path.join(src, f), path.join(tmp, f));
  fs.writeFileSync(path.join(tmp, 'summary.json'), JSON.stringify(summary));
  const t0 = process.hrtime.bigint();
  fs.renameSync(tmp, dst);
  await waitFor(() => notes.some(([m, p]) => m === 'seedfall/failureFound' && p.seed === 999999), 10000, 'failureFound');
  console.log(`# failure folder on disk -> failureFound notification: ${(Number(process.hrtime.bigint() - t0) / 1e6).toFixed(1)} ms`);
  // Deleting every failure folder clears the diagnostics.
  fs.rmSync(failuresDir, { recursive: true, force: true });
  const mainGo = path.join(ws, 'main.go');
  await waitFor(() => diagsOf(mainGo).filter((d) => d.severity === 1).length === 0, 10000, 'diagnostics cleared');
  // A sweep in a terminal brings them back.
  spawnSync(bin, ['run', '-c', path.join(ws, 'seedfall.json'), '-seeds', '1-20'], { env, cwd: ws });
  const t1 = process.hrtime.bigint();
  await waitFor(() => diagsOf(mainGo).some((d) => d.severity === 1), 10000, 'diagnostics after a terminal sweep');
  console.log(`# CLI sweep finished -> diagnostic published: ${(Number(process.hrtime.bigint() - t1) / 1e6).toFixed(1)} ms`);
  // Fix the bug and rerun the same seeds: the failures no longer reproduce, their folders go, the diagnostics clear.
  const code = fs.readFileSync(mainGo, 'utf8');
  fs.writeFileSync(mainGo, code.replace('if b.balances[from] < 0 {', 'if false && b.balances[from] < 0 {'));
  const rerun = spawnSync(bin, ['run', '-c', path.join(ws, 'seedfall.json'), '-seeds', '1-20'], { env, cwd: ws });
  assert.equal(rerun.status, 0, String(rerun.stdout));
  await waitFor(() => diagsOf(mainGo).filter((d) => d.severity === 1).length === 0, 10000, 'diagnostics cleared after the fix');
  fs.writeFileSync(mainGo, code);
});

test('robustness: unknown methods, outside files, bad arguments, malformed input', async () => {
  await assert.rejects(conn.sendRequest('seedfall/noSuchThing', {}), /Method not found|not found/i);
  await assert.rejects(conn.sendRequest('textDocument/codeLens', { textDocument: { uri: 'file:///etc/passwd' } }), /outside the workspace/);
  await assert.rejects(conn.sendRequest('workspace/executeCommand', { command: 'seedfall.replay', arguments: [{ config: path.join(ws, 'seedfall.json') }] }), /needs/);
  await assert.rejects(conn.sendRequest('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config: '/nowhere/seedfall.json' }] }), /outside the workspace/);
  await assert.rejects(conn.sendRequest('workspace/executeCommand', { command: 'seedfall.bogus', arguments: [] }), /unknown command/);
  proc.stdin.write('Content-Length: 9\r\n\r\n{not json');
  await waitFor(() => notes.some(([m, p]) => m === 'window/logMessage' && /invalid message/.test(p.message)), 5000, 'malformed message logged');
  const lenses = await conn.sendRequest('textDocument/codeLens', { textDocument: { uri: uri(path.join(ws, 'seedfall.json')) } });
  assert.ok(lenses.length >= 3, 'still serving');
});
