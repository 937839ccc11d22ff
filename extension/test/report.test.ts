// The triage report renders in headless Chromium, its timeline iframe
// included; the screenshot is the one in docs/report.md.
import { describe, it, expect } from 'vitest';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const repo = path.resolve(__dirname, '../..');
const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');

describe('report page', () => {
  it('renders failures, the run timeline, properties and exploration', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-report-'));
    const cfg = path.join(dir, 'seedfall.json');
    fs.writeFileSync(cfg, JSON.stringify({ name: 'kvlog', duration: '3s', nodes: [{ name: 'kv', go: { dir: path.join(repo, 'examples/kvlog') } }],
      faults: { crash: { rate: 2, restart_after: '5ms-50ms', during_disk_op: 0.5 }, torn_writes: true } }));
    const html = path.join(dir, 'report.html');
    spawnSync(bin, ['run', '-c', cfg, '-seeds', '1-200', '-until-novelty', '4', '-batch', '20', '-report', html], {
      env: { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache') },
    });
    const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1150, height: 900 } });
      await page.goto('file://' + html);
      expect(await page.locator('h1').textContent()).toBe('seedfall report: kvlog');
      expect(await page.locator('section.failure h3').first().textContent()).toContain('property "acknowledged writes survive crashes"');
      const frame = page.frameLocator('iframe.timeline').first();
      await expect.poll(() => frame.locator('svg .ev-failure').count()).toBe(1);
      expect(await page.locator('h2').allTextContents()).toEqual(['Failures', 'Properties', 'Exploration']);
      if (process.env.SEEDFALL_SCREENSHOTS) await page.screenshot({ path: path.join(process.env.SEEDFALL_SCREENSHOTS, 'report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
