// Drives `seedfall mcp` with the official MCP TypeScript SDK over stdio:
// list the tools, sweep an example, explore until the vault opens, shrink a
// kvlog failure, name the faults its failure needs (cause), and get a clear
// tool error for malformed arguments while the server keeps serving.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../../../..');
const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');
let client;

before(async () => {
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp'],
    cwd: repo,
    env: { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache') },
    stderr: 'inherit',
  });
  client = new Client({ name: 'seedfall-test', version: '1.0.0' });
  await client.connect(transport);
});

after(async () => { await client?.close(); });

test('lists the seven tools, each with a JSON schema', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['seedfall_cause', 'seedfall_explore', 'seedfall_inspect', 'seedfall_pin', 'seedfall_replay', 'seedfall_run', 'seedfall_shrink']);
  const run = tools.find((t) => t.name === 'seedfall_run');
  assert.equal(run.inputSchema.type, 'object');
  assert.ok(run.inputSchema.properties.until_novelty);
  assert.deepEqual(run.inputSchema.required, ['config']);
});

test('run sweeps an example and reports progress', async () => {
  const progress = [];
  const r = await client.callTool({ name: 'seedfall_run', arguments: { config: 'examples/ledger/seedfall.json', seeds: '1-60' } }, undefined, { onprogress: (p) => progress.push(p) });
  assert.ok(!r.isError, JSON.stringify(r.content));
  assert.equal(r.structuredContent.exit, 1);
  assert.equal(r.structuredContent.result.runs, 60);
  assert.ok(r.structuredContent.result.failures.length > 0);
  assert.match(r.content[0].text, /^60 runs, \d+ failed in 1 finding; bank: panic: account N overdrawn: balance N after teller N moved N \(\d+ seeds, shortest seed \d+, schedule .*faults.json\)/);
  assert.ok(progress.length > 0 && progress.at(-1).total === 60);
});

test('run with until_novelty returns the growth table', async () => {
  const r = await client.callTool({ name: 'seedfall_run', arguments: { config: 'examples/kvlog/seedfall.fixed.json', seeds: '1-2000', until_novelty: 2, batch: 20 } });
  const growth = r.structuredContent.result.exploration.growth;
  assert.ok(growth.length >= 2);
  assert.match(r.structuredContent.result.exploration.stop, /no novelty/);
});

test('explore opens the vault', async () => {
  const r = await client.callTool({ name: 'seedfall_explore', arguments: { config: 'examples/explore/seedfall.json', rounds: 60, until_novelty: 30, explore_seed: 7 } });
  assert.ok(!r.isError, JSON.stringify(r.content));
  const res = r.structuredContent.result;
  assert.equal(res.stop, 'failure found');
  assert.equal(res.failures[0].nodes[0].message, 'the vault opened after 6 consecutive lucky draws');
  assert.ok(res.rounds.length > 1);
});

test('shrink reduces a kvlog failure', async () => {
  const r = await client.callTool({ name: 'seedfall_shrink', arguments: { config: 'examples/kvlog/seedfall.json', seed: 2 } });
  assert.ok(!r.isError, JSON.stringify(r.content));
  assert.match(r.content[0].text, /faults before the failure \(\d+\):/);
  assert.match(r.content[0].text, /crash kv/);
});

test('cause names the necessary crash of a kvlog failure', async () => {
  const r = await client.callTool({ name: 'seedfall_cause', arguments: { config: 'examples/kvlog/seedfall.json', seed: 2 } });
  assert.ok(!r.isError, JSON.stringify(r.content));
  assert.match(r.content[0].text, /^necessary faults: crash kv at \d+ ns/);
  assert.match(r.content[0].text, /became certain in \[\d+,\d+\] ns$/);
  const result = r.structuredContent.result;
  assert.ok(result.necessary_faults.length > 0);
  assert.equal(result.moments_after_ns, Math.max(...result.necessary_faults.map((t) => t.fault.at_ns)));
});

test('malformed arguments are a clear error and the server keeps serving', async () => {
  const bad = await client.callTool({ name: 'seedfall_replay', arguments: { config: 'examples/kvlog/seedfall.json', seed: 'not a number' } }).then(
    (r) => (r.isError ? JSON.stringify(r.content) : 'no error'),
    (e) => String(e),
  );
  assert.match(bad, /seed|invalid|type/i);
  // A misspelt argument is refused by name, not ignored (it ran the default seeds).
  const misspelt = await client.callTool({ name: 'seedfall_run', arguments: { config: 'examples/ledger/seedfall.json', seedz: '1-3' } }).then(
    (r) => (r.isError ? JSON.stringify(r.content) : `no error: ${JSON.stringify(r.structuredContent ?? r.content).slice(0, 200)}`),
    (e) => String(e),
  );
  assert.match(misspelt, /unknown field `seedz`/);
  const missing = await client.callTool({ name: 'seedfall_replay', arguments: { config: 'examples/nowhere.json', seed: 1 } });
  assert.equal(missing.isError, true);
  assert.match(missing.content[0].text, /does not exist/);
  const ok = await client.callTool({ name: 'seedfall_replay', arguments: { config: 'examples/kvlog/seedfall.json', seed: 2 } });
  assert.equal(ok.structuredContent.result.verdict, 'fail');
});

test('a long call can be cancelled, and the server keeps serving', async () => {
  const controller = new AbortController();
  let progressed = false;
  const call = client.callTool({ name: 'seedfall_run', arguments: { config: 'examples/kvlog/seedfall.fixed.json', seeds: '1-100000' } }, undefined, {
    signal: controller.signal,
    onprogress: () => { if (!progressed) { progressed = true; controller.abort(); } },
  });
  await assert.rejects(call, /abort/i);
  assert.ok(progressed, 'the long call reported progress before it was cancelled');
  const { tools } = await client.listTools();
  assert.equal(tools.length, 7);
});
