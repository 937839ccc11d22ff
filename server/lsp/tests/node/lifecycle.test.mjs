// The daemon's life at its edges: a frame whose Content-Length is short
// (counted in characters, not bytes) leaves it in step; `exit` says 0 after
// a `shutdown` and 1 without one, as LSP asks; and when the client's end of
// stdin closes, the jobs it started are cancelled, not waited for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { RawPeer, kvlogWorkspace, uri, waitFor } from './raw.mjs';

const peers = [];
after(async () => Promise.all(peers.map((p) => p.close())));

async function start() {
  const ws = kvlogWorkspace('seedfall-life-');
  const peer = new RawPeer(ws);
  peers.push(peer);
  await peer.initialize();
  return { ws, peer, config: path.join(ws, 'seedfall.json') };
}

test('a Content-Length counted in characters, or far too short, does not wedge the daemon', async () => {
  const { peer, config } = await start();
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'workspace/executeCommand', params: { command: 'seedfall.stop', arguments: [{ note: '日本' }] } }));
  // "日本" is 2 characters, 6 bytes: 4 bytes short.
  peer.writeRaw(Buffer.concat([Buffer.from(`Content-Length: ${body.length - 4}\r\n\r\n`), body]));
  for (let i = 0; i < 3; i++) {
    const r = await peer.request('textDocument/codeLens', { textDocument: { uri: uri(config) } }, 2000);
    assert.ok(Array.isArray(r.result), JSON.stringify(r));
  }
  peer.writeRaw(Buffer.concat([Buffer.from('Content-Length: 5\r\n\r\n'), body]));
  const r = await peer.request('textDocument/codeLens', { textDocument: { uri: uri(config) } }, 2000);
  assert.ok(Array.isArray(r.result), JSON.stringify(r));
  const shut = await peer.request('shutdown', null, 2000);
  assert.deepEqual(shut.result, null);
});

test('exit after shutdown is 0, exit without it is 1', async () => {
  const a = await start();
  await a.peer.request('shutdown', null, 3000);
  a.peer.notify('exit', null);
  await waitFor(() => a.peer.exited, 5000, 'the daemon to exit after shutdown and exit');
  assert.equal(a.peer.exited.code, 0);
  const b = await start();
  b.peer.notify('exit', null);
  await waitFor(() => b.peer.exited, 5000, 'the daemon to exit on exit');
  assert.equal(b.peer.exited.code, 1, 'no shutdown came first');
});

test('closing stdin cancels a running sweep instead of waiting for it', async () => {
  const { peer, config } = await start();
  // Far longer than any test waits: only cancelling ends it.
  peer.write({ jsonrpc: '2.0', id: 42, method: 'workspace/executeCommand', params: { command: 'seedfall.run', arguments: [{ config, seeds: '1-500000' }] } });
  const child = () => {
    try {
      return execFileSync('pgrep', ['-f', `run -c ${config}`]).toString().trim();
    } catch {
      return '';
    }
  };
  await waitFor(() => child(), 20000, 'the sweep to start');
  peer.proc.stdin.end();
  await waitFor(() => peer.exited, 20000, 'the daemon to exit once its stdin closed');
  await waitFor(() => child() === '', 5000, 'the sweep it started to be gone');
});
