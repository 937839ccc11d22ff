// A raw LSP peer for tests that must send what no well-behaved client
// sends (malformed frames, invalid JSON-RPC, bursts) and count exactly what
// the daemon says back. It parses the daemon's stdout itself, so nothing a
// client library would hide (or choke on) goes unseen.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, '../../../..');
export const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');
export const env = { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache') };
export const uri = (p) => pathToFileURL(p).toString();

/** A copy of examples/kvlog whose go.mod points at this repository's SDK. */
export function kvlogWorkspace(prefix) {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const f of ['main.go', 'go.mod', 'seedfall.json', 'seedfall.fixed.json']) fs.copyFileSync(path.join(repo, 'examples/kvlog', f), path.join(ws, f));
  const mod = fs.readFileSync(path.join(ws, 'go.mod'), 'utf8').replace('=> ../../sdk/go', `=> ${path.join(repo, 'sdk/go')}`);
  fs.writeFileSync(path.join(ws, 'go.mod'), mod);
  return ws;
}

export const frame = (body) => {
  const b = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return Buffer.concat([Buffer.from(`Content-Length: ${b.length}\r\n\r\n`), b]);
};

export class RawPeer {
  /**
   * @param {string} ws workspace root
   * @param {object} opts answerRefresh: answer workspace/codeLens/refresh;
   *   capabilities: the client capabilities sent in initialize.
   */
  constructor(ws, { answerRefresh = true, capabilities = {}, args = ['lsp'] } = {}) {
    this.ws = ws;
    this.answerRefresh = answerRefresh;
    this.capabilities = capabilities;
    this.messages = []; // [ms since start, message]
    this.t0 = Date.now();
    this.nextId = 1000;
    this.waiters = new Map();
    this.exited = null;
    this.proc = spawn(bin, args, { cwd: ws, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.stderr = '';
    this.proc.stderr.on('data', (d) => { this.stderr += d; });
    this.proc.on('exit', (code, signal) => { this.exited = { code, signal }; });
    this.proc.stdin.on('error', () => {});
    let buf = Buffer.alloc(0);
    this.proc.stdout.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const m = /Content-Length: (\d+)/i.exec(buf.subarray(0, end).toString());
        if (!m) throw new Error(`daemon wrote a header block without Content-Length: ${buf.subarray(0, end)}`);
        const n = Number(m[1]);
        if (buf.length < end + 4 + n) return;
        const msg = JSON.parse(buf.subarray(end + 4, end + 4 + n).toString());
        buf = buf.subarray(end + 4 + n);
        this.onMessage(msg);
      }
    });
  }

  onMessage(msg) {
    this.messages.push([Date.now() - this.t0, msg]);
    if (msg.method && msg.id !== undefined) {
      // A request from the daemon.
      if (msg.method === 'workspace/codeLens/refresh' && !this.answerRefresh) return;
      this.write({ jsonrpc: '2.0', id: msg.id, result: null });
      return;
    }
    if (!msg.method) {
      const key = JSON.stringify(msg.id);
      const w = this.waiters.get(key);
      if (w) {
        this.waiters.delete(key);
        w(msg);
      }
    }
  }

  write(body) {
    this.proc.stdin.write(frame(body));
  }

  writeRaw(bytes) {
    this.proc.stdin.write(bytes);
  }

  /** Sends a request and resolves with the whole response message. */
  request(method, params, ms = 10000) {
    const id = this.nextId++;
    return this.awaitResponse(id, () => this.write({ jsonrpc: '2.0', id, method, params }), ms, method);
  }

  /** Resolves with the response to `id` once it arrives (after `send`). */
  awaitResponse(id, send, ms = 10000, what = `response ${JSON.stringify(id)}`) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiters.delete(JSON.stringify(id));
        reject(new Error(`no answer to ${what} within ${ms} ms (daemon exit: ${JSON.stringify(this.exited)}; stderr: ${this.stderr.slice(-500)})`));
      }, ms);
      this.waiters.set(JSON.stringify(id), (m) => { clearTimeout(t); resolve(m); });
      send();
    });
  }

  notify(method, params) {
    this.write({ jsonrpc: '2.0', method, params });
  }

  async initialize() {
    const r = await this.request('initialize', {
      processId: process.pid, rootUri: uri(this.ws), workspaceFolders: [{ uri: uri(this.ws), name: 'ws' }], capabilities: this.capabilities,
    });
    this.notify('initialized', {});
    return r;
  }

  /** Messages from the daemon of one method, since `since` ms. */
  count(method, since = 0) {
    return this.messages.filter(([t, m]) => t >= since && m.method === method).length;
  }

  now() {
    return Date.now() - this.t0;
  }

  async close() {
    if (!this.exited) {
      try {
        await Promise.race([this.request('shutdown', null, 3000), new Promise((r) => setTimeout(r, 3000))]);
      } catch {}
      try { this.notify('exit', null); } catch {}
      await new Promise((r) => setTimeout(r, 200));
    }
    this.proc.kill('SIGKILL');
  }
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function waitFor(pred, ms, what) {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      const v = pred();
      if (v) return resolve(v);
      if (Date.now() - t0 > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}
