// The timeline page in headless Chromium (Debian's chromium, driven by
// playwright-core), standalone on a real run's events served from
// localhost: lanes per node, the failure marked, and a click on a property
// event posts {type: "open", location}. Also takes the screenshot used in
// docs/editor.md.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import type http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { bin, env, launchChromium, repo, servePages } from './pages';

let server: http.Server;
let base = '';
let browser: Browser;
let events = '';

beforeAll(async () => {
  const r = spawnSync(bin, ['inspect', '-c', path.join(repo, 'examples/kvlog/seedfall.json'), '-seed', '2', '-json'], { env });
  events = r.stdout.toString();
  expect(events.split('\n').length).toBeGreaterThan(10);
  ({ server, base } = await servePages((url) => (url.startsWith('/run.jsonl') ? events : undefined)));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  server?.close();
});

describe('timeline page', () => {
  it('shows lanes, the failure, and posts open for a clicked property', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 360 } });
    await page.goto(`${base}/timeline.html?data=/run.jsonl`);
    await page.waitForSelector('svg .ev');
    expect(await page.locator('.lane-label').allTextContents()).toContain('kv');
    expect(await page.locator('.ev-failure').count()).toBe(1);
    // One marker per crash the run had (kvlog's seed 2 fails after its first).
    const crashes = events.split('\n').filter((l) => l.includes('"event":"crash"')).length;
    expect(crashes).toBeGreaterThanOrEqual(1);
    expect(await page.locator('.ev-crash').count()).toBe(crashes);
    const failingProperty = page.locator('.ev-property').last();
    await failingProperty.dispatchEvent('click'); // the failure marker sits on top of it
    const posted = await page.evaluate(() => (window as unknown as { __seedfallPosted: unknown[] }).__seedfallPosted);
    expect(posted).toEqual([{ type: 'open', location: expect.stringMatching(/main\.go:\d+$/) }]);
    expect(await page.locator('#detail').textContent()).toContain('acknowledged writes survive crashes');
    // A crash says what it lost, path by path; disk events say what they touched.
    await page.locator('.ev-crash').first().dispatchEvent('click');
    expect(await page.locator('#detail').textContent()).toMatch(/crashed: 1 unsynced sectors lost, 0 torn sectors kept\n  \/data\/kv\.log: 1 unsynced sectors lost/);
    await page.locator('.ev-disk').first().dispatchEvent('click');
    expect(await page.locator('#detail').textContent()).toContain('mkdir /data');
    // Screenshots for the docs are taken on purpose (scripts that set
    // SEEDFALL_SCREENSHOTS), never by a test run into tracked files.
    if (process.env.SEEDFALL_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.SEEDFALL_SCREENSHOTS, 'timeline.png') });
  });

  it('opened at the failure, shows its details and rings its marker without a click', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 360 } });
    await page.goto(`${base}/timeline.html?data=/run.jsonl&focus=failure`);
    await page.waitForSelector('svg .ev');
    expect(await page.locator('#detail').textContent()).toContain('FAILED: always property false: acknowledged writes survive crashes');
    expect(await page.locator('.ev-failure.focused').count()).toBe(1);
    expect(await page.locator('.focused').count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __seedfallPosted: unknown[] }).__seedfallPosted)).toEqual([]);
  });

  it('says so when there is nothing to show', async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/timeline.html`);
    expect(await page.locator('#empty').textContent()).toContain('?data=');
  });
});
