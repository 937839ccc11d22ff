// What the page tests share: a loopback server for media/ and a run's data,
// and headless Chromium (Debian's chromium, driven by playwright-core).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { chromium, Browser } from 'playwright-core';

export const repo = path.resolve(__dirname, '../..');
export const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');
export const env = { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache') };
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

/** Serves `data(url)` when it answers, else the media/ page named by the
 *  URL's last segment; resolves to the server and its base URL. */
export async function servePages(data: (url: string) => string | undefined): Promise<{ server: http.Server; base: string }> {
  const server = http.createServer((req, res) => {
    const body = data(req.url ?? '');
    if (body !== undefined) return res.end(body);
    const file = path.join(__dirname, '../media', path.basename(req.url?.split('?')[0] || ''));
    if (!fs.existsSync(file)) { res.statusCode = 404; return res.end(); }
    res.setHeader('content-type', 'text/html');
    res.end(fs.readFileSync(file));
  }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
}
