// Protocol fuzz: bursts of edits and every kind of malformed frame and
// object. After each, the daemon must still be alive and answer a valid
// request within a second; invalid requests get JSON-RPC errors with their
// id; a client that never declared codeLens.refreshSupport is never sent a
// refresh request.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { RawPeer, frame, kvlogWorkspace, sleep, uri, waitFor } from './raw.mjs';

const peers = [];
after(async () => Promise.all(peers.map((p) => p.close())));

const refreshCaps = { workspace: { codeLens: { refreshSupport: true } } };

async function start(opts) {
  const ws = kvlogWorkspace('seedfall-proto-');
  const peer = new RawPeer(ws, opts);
  peers.push(peer);
  await peer.initialize();
  return { ws, peer, config: path.join(ws, 'seedfall.json') };
}

/** A valid request is answered within a second, and the daemon lives. */
async function answersWithinASecond(peer, config, what) {
  const t0 = Date.now();
  const r = await peer.request('textDocument/codeLens', { textDocument: { uri: uri(config) } }, 1000).catch((e) => assert.fail(`${what}: ${e.message}`));
  assert.ok(Array.isArray(r.result), `${what}: ${JSON.stringify(r)}`);
  assert.equal(peer.exited, null, `${what}: the daemon exited`);
  return Date.now() - t0;
}

/** 2,000 didChange notifications written at once, alternating a broken and a good config. */
function burst(peer, config, n = 2000) {
  const good = JSON.stringify({ version: 1, duration: '3s', nodes: [{ name: 'kv', go: { dir: '.' } }] });
  const bad = good.replace('"name"', '"nmae"');
  peer.notify('textDocument/didOpen', { textDocument: { uri: uri(config), languageId: 'json', version: 0, text: good } });
  const frames = [];
  for (let v = 1; v <= n; v++) {
    frames.push(frame({ jsonrpc: '2.0', method: 'textDocument/didChange', params: { textDocument: { uri: uri(config), version: v }, contentChanges: [{ text: v % 2 ? bad : good }] } }));
  }
  peer.writeRaw(Buffer.concat(frames));
}

test('2,000 didChange at once, with a client that answers refreshes', async () => {
  const { peer, config } = await start({ capabilities: refreshCaps });
  burst(peer, config);
  const ms = await answersWithinASecond(peer, config, 'after the burst');
  console.log(`# codeLens answered ${ms} ms after a 2,000-change burst`);
  // The last change (a good config) wins: the config's diagnostics end
  // empty (published empty after a broken state was shown, or never shown).
  await sleep(1500);
  const last = peer.messages.filter(([, m]) => m.method === 'textDocument/publishDiagnostics' && m.params.uri === uri(config)).pop();
  assert.deepEqual(last?.[1].params.diagnostics ?? [], [], 'the final state of the burst is what shows');
  // A broken config after the burst is shown at once.
  const broken = JSON.stringify({ version: 1, duration: '3s', nodes: [{ nmae: 'kv' }] });
  peer.notify('textDocument/didChange', { textDocument: { uri: uri(config), version: 5000 }, contentChanges: [{ text: broken }] });
  await waitFor(() => peer.messages.some(([, m]) => m.method === 'textDocument/publishDiagnostics' && m.params.uri === uri(config) && m.params.diagnostics.some((d) => /nmae/.test(d.message))), 2000, 'the broken config diagnostic');
  const publishes = peer.count('textDocument/publishDiagnostics');
  console.log(`# publishes for a 2,000-change burst: ${publishes} (${peer.messages.filter(([, m]) => m.method === "textDocument/publishDiagnostics").map(([, m]) => `${path.basename(m.params.uri)}: ${m.params.diagnostics.length}`).join(", ")})`);
  assert.ok(publishes < 100, `changes are coalesced (${publishes} publishes)`);
});

test('2,000 didChange at once, with a client that never answers refreshes', async () => {
  const { peer, config } = await start({ capabilities: refreshCaps, answerRefresh: false });
  burst(peer, config);
  await answersWithinASecond(peer, config, 'after the burst');
  burst(peer, config);
  await answersWithinASecond(peer, config, 'after a second burst');
});

test('a client without codeLens.refreshSupport is never sent a refresh', async () => {
  const { ws, peer, config } = await start({ capabilities: {} });
  burst(peer, config, 200);
  await answersWithinASecond(peer, config, 'after the burst');
  // A sweep changes the lenses; a client that cannot refresh is not asked to.
  const r = await peer.request('workspace/executeCommand', { command: 'seedfall.run', arguments: [{ config, seeds: '1-20' }] }, 60000);
  assert.equal(r.result.exit, 1, JSON.stringify(r));
  await sleep(1000);
  assert.equal(peer.count('workspace/codeLens/refresh'), 0);
  assert.equal(peer.count('window/workDoneProgress/create'), 0, 'nor asked to create progress it never offered');
  assert.ok(peer.count('textDocument/publishDiagnostics') >= 1, `the failure is published in ${ws}`);
});

const invalid = [
  // [what, bytes, expected error code or null when only skipped, expected id]
  ['an object that is not JSON-RPC', frame('{"id":9,"foo":"bar"}'), -32600, 9],
  ['jsonrpc 1.0', frame('{"jsonrpc":"1.0","id":10,"method":"textDocument/codeLens","params":{}}'), -32600, 10],
  ['an object id', frame('{"jsonrpc":"2.0","id":{"a":1},"method":"textDocument/codeLens","params":{}}'), -32600, null],
  ['a numeric method', frame('{"jsonrpc":"2.0","id":11,"method":42}'), -32600, 11],
  ['a fractional id', frame('{"jsonrpc":"2.0","id":1.5,"method":"shutdown"}'), -32600, null],
  ['params that are a string', frame('{"jsonrpc":"2.0","id":12,"method":"textDocument/codeLens","params":"x"}'), -32600, 12],
  ['a batch', frame('[{"jsonrpc":"2.0","id":13,"method":"shutdown"}]'), -32600, null],
  ['a JSON string', frame('"hello"'), -32600, null],
  ['not JSON', frame('{not json'), -32700, null],
  ['not UTF-8', frame(Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), -32700, null],
  ['Content-Length: abc', Buffer.from('Content-Length: abc\r\n\r\n{"jsonrpc":"2.0","id":14,"method":"shutdown"}'), -32600, 14],
  ['a header block with no Content-Length', Buffer.from('Content-Type: application/json\r\n\r\n{"jsonrpc":"2.0","id":15,"method":"shutdown"}'), -32600, 15],
  ['a negative Content-Length', Buffer.from('Content-Length: -5\r\n\r\n{"jsonrpc":"2.0","method":"x"}'), null, null],
  ['garbage before a header', Buffer.from('garbage line\r\nmore garbage\r\n\r\n'), null, null],
  ['a Content-Length over the limit', Buffer.from('Content-Length: 999999999999\r\n\r\n{"jsonrpc":"2.0","id":17,"method":"shutdown"}'), -32600, 17],
  ['a response to nothing', frame('{"jsonrpc":"2.0","id":99999,"result":null}'), null, null],
  ['an object with neither method nor result', frame('{"jsonrpc":"2.0","id":99998}'), -32600, 99998],
  ['an unknown notification', frame('{"jsonrpc":"2.0","method":"$/noSuchThing","params":{}}'), null, null],
  ['a known notification with bad params', frame('{"jsonrpc":"2.0","method":"textDocument/didChange","params":{"bogus":true}}'), null, null],
  ['a request for an unknown method', frame('{"jsonrpc":"2.0","id":16,"method":"seedfall/noSuchThing","params":{}}'), -32601, 16],
];

test('every malformed frame and object: an error (or a skip) and the daemon keeps serving', async () => {
  const { peer, config } = await start({ capabilities: refreshCaps });
  for (const [what, bytes, code, id] of invalid) {
    const before = peer.messages.length;
    peer.writeRaw(bytes);
    await answersWithinASecond(peer, config, what);
    const errors = peer.messages.slice(before).map(([, m]) => m).filter((m) => m.error);
    if (code !== null) {
      assert.ok(errors.some((m) => m.error.code === code && m.id === id), `${what}: expected error ${code} for id ${id}, got ${JSON.stringify(errors)}`);
    } else {
      assert.deepEqual(errors, [], `${what}: skipped without an error response`);
    }
  }
  // All of them at once, in one write.
  peer.writeRaw(Buffer.concat(invalid.map(([, b]) => b)));
  await answersWithinASecond(peer, config, 'all malformed messages in one write');
  const logged = peer.messages.filter(([, m]) => m.method === 'window/logMessage' && /ignored|skipped|invalid/i.test(m.params.message));
  assert.ok(logged.length > 0, 'the skips are logged');
});
