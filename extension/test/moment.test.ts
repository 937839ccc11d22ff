// The moment page in headless Chromium, standalone on real moments of
// kvlog's seed 2 (`seedfall inspect -at-event N -json`): right before the
// crash the log is dirty and open, right after it kv is crashed and its log
// durable; the buttons post the moments before and after and the branch.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { bin, env, launchChromium, repo, servePages } from './pages';

const config = path.join(repo, 'examples/kvlog/seedfall.json');
let server: http.Server;
let base = '';
let browser: Browser;
const moments = new Map<string, string>();

function inspect(args: string[]): string {
  const r = spawnSync(bin, ['inspect', '-c', config, '-seed', '2', '-json', ...args], { env });
  return r.stdout.toString();
}

beforeAll(async () => {
  const events = inspect([]).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const fault = events.findIndex((e) => e.event === 'fault');
  const crash = events.findIndex((e) => e.event === 'crash');
  expect(fault).toBeGreaterThan(0);
  moments.set('before', inspect(['-at-event', String(fault - 1)]));
  moments.set('after', inspect(['-at-event', String(crash)]));
  ({ server, base } = await servePages((url) => {
    const m = /^\/moment-(\w+)\.json/.exec(url);
    return m ? moments.get(m[1]) : undefined;
  }));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

async function open(which: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 900, height: 500 } });
  await page.goto(`${base}/moment.html?data=/moment-${which}.json`);
  await page.waitForSelector('section.node[data-node="kv"]');
  return page;
}

const posted = (page: Page) => page.evaluate(() => (window as unknown as { __seedfallPosted: unknown[] }).__seedfallPosted);

describe('moment page', () => {
  it('before the crash: kv up, the log open and only partly durable', async () => {
    const page = await open('before');
    const kv = page.locator('section.node[data-node="kv"]');
    expect(await kv.locator('.status').textContent()).toMatch(/^(waiting|running)/);
    expect(await kv.locator('table').first().textContent()).toContain('/data/kv.log');
    expect(await kv.locator('tr.entry[data-path="/data/kv.log"]').getAttribute('data-state')).toBe('dirty');
    expect(await page.locator('#branch').isDisabled()).toBe(false);
  });

  it('after the crash: kv down, holding nothing, its log durable; the buttons post where to go', async () => {
    const page = await open('after');
    const m = JSON.parse(moments.get('after')!);
    const kv = page.locator('section.node[data-node="kv"]');
    expect(await kv.locator('.status').textContent()).toBe('crashed, 1 crash so far');
    expect(await kv.locator('tr.entry[data-path="/data/kv.log"]').getAttribute('data-state')).toBe('durable');
    expect(await page.locator('#span').textContent()).toContain('crashed: 1 unsynced sectors lost');
    await page.locator('#back').click();
    await page.locator('#forward').click();
    await page.locator('#branch').click();
    expect(await posted(page)).toEqual([
      { type: 'step', at_event: m.events_from - 1 },
      { type: 'step', at_event: m.events_to },
      { type: 'branch', from: m.branch.from, prefix_seed: 2 },
    ]);
    // A moment pushed by the extension replaces the page's.
    await page.evaluate((text) => window.postMessage({ type: 'moment', moment: JSON.parse(text) }, '*'), moments.get('before')!);
    await page.locator('tr.entry[data-path="/data/kv.log"][data-state="dirty"]').waitFor();
  });
});
