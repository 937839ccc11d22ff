// The end-to-end test of record: the real extension in a real VS Code.
//
// It installs code-server 4.100.3 (VS Code 1.100.3) from npm (once, into
// target/code-server), builds the real per-platform .vsix with the bundled
// binary, installs it into an isolated profile, opens a copy of
// examples/kvlog, starts code-server on 127.0.0.1 in its own process group
// and drives the workbench with playwright-core in headless Chromium, as a
// user would: the palette, the views, the lenses, the Problems panel.
//
// Prints one line per check and `N passed, N failed`; exits 1 on any
// failure. Stops every process it started. With SEEDFALL_SCREENSHOTS=dir it
// also saves the screenshots docs/editor.md shows.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const extRoot = path.resolve(here, '..');
const repo = path.resolve(extRoot, '..');
const bin = process.env.SEEDFALL_BIN || path.join(repo, 'target/release/seedfall');
const hostDir = path.join(repo, 'target/code-server');
const shots = process.env.SEEDFALL_SCREENSHOTS ? path.resolve(process.env.SEEDFALL_SCREENSHOTS) : undefined;
const STEP_MS = 60000; // bound on any one wait for the UI

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const results = [];
let codeServer, browser, scratch, page;

function log(line) {
  console.log(`[${elapsed()}] ${line}`);
}

async function check(name, fn) {
  try {
    await fn();
    results.push([name, true]);
    log(`ok   ${name}`);
    return true;
  } catch (e) {
    results.push([name, false]);
    log(`FAIL ${name}: ${e.message.split('\n').slice(0, 6).join('\n     ')}`);
    // What the workbench showed, kept with the scratch folder for a look.
    const picture = scratch && path.join(scratch, `failed-${results.length}.png`);
    if (picture && (await page?.screenshot({ path: picture }).then(() => true, () => false))) log(`     the workbench then: ${picture}`);
    return false;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

/** A copy of examples/kvlog whose go.mod points at this repository's SDK. */
function workspace(root) {
  const ws = path.join(root, 'kvlog');
  fs.mkdirSync(ws);
  for (const f of ['main.go', 'go.mod', 'seedfall.json', 'seedfall.fixed.json', 'README.md']) fs.copyFileSync(path.join(repo, 'examples/kvlog', f), path.join(ws, f));
  const mod = fs.readFileSync(path.join(ws, 'go.mod'), 'utf8').replace('=> ../../sdk/go', `=> ${path.join(repo, 'sdk/go')}`);
  fs.writeFileSync(path.join(ws, 'go.mod'), mod);
  // One config keeps the palette commands from asking which one.
  fs.rmSync(path.join(ws, 'seedfall.fixed.json'));
  return ws;
}

function descendants(pid) {
  const all = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  const parent = new Map();
  for (const p of all) {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      parent.set(p, stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    } catch {}
  }
  const out = [];
  const walk = (p) => { for (const [c, pp] of parent) if (pp === String(p)) { out.push(c); walk(c); } };
  walk(pid);
  return out.map((p) => { try { return [p, fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').filter(Boolean)]; } catch { return [p, []]; } });
}

async function stopAll() {
  try { await browser?.close(); } catch {}
  if (codeServer?.pid) {
    try { process.kill(-codeServer.pid, 'SIGTERM'); } catch {}
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      try { process.kill(-codeServer.pid, 0); } catch { break; }
      await new Promise((r) => setTimeout(r, 100));
    }
    try { process.kill(-codeServer.pid, 'SIGKILL'); } catch {}
  }
}

async function main() {
  // 1. The host and the extension, for real.
  execFileSync(path.join(here, 'install-host.sh'), [hostDir], { stdio: 'inherit' });
  if (!fs.existsSync(bin)) throw new Error(`no seedfall binary at ${bin}: cargo build --release -p seedfall`);
  execFileSync(process.execPath, [path.join(extRoot, 'scripts/package.mjs')], { cwd: extRoot, stdio: 'pipe', env: { ...process.env, SEEDFALL_BIN: bin } });
  const vsix = path.join(extRoot, 'seedfall-linux-x64.vsix');
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'seedfall-e2e-'));
  const [ud, exts, cfg] = ['user-data', 'extensions', 'config.yaml'].map((d) => path.join(scratch, d));
  const ws = workspace(scratch);
  const codeServerBin = path.join(hostDir, 'node_modules/.bin/code-server');
  const env = { ...process.env, SEEDFALL_CACHE_DIR: path.join(repo, 'target/seedfall-test-cache'), XDG_CONFIG_HOME: path.join(scratch, 'xdg') };
  delete env.SEEDFALL_BIN; // the extension must start its own bundled binary
  const install = spawnSync(codeServerBin, ['--install-extension', vsix, '--extensions-dir', exts, '--user-data-dir', ud, '--config', cfg], { env, encoding: 'utf8' });
  if (install.status !== 0) throw new Error(`--install-extension failed: ${install.stdout}${install.stderr}`);
  fs.mkdirSync(path.join(ud, 'User'), { recursive: true });
  fs.writeFileSync(path.join(ud, 'User/settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none', 'workbench.tips.enabled': false, 'telemetry.telemetryLevel': 'off', 'security.workspace.trust.enabled': false,
    'extensions.autoUpdate': false, 'extensions.autoCheckUpdates': false, 'update.mode': 'none', 'workbench.enableExperiments': false,
    'editor.codeLens': true, 'editor.minimap.enabled': false, 'window.restoreWindows': 'none', 'workbench.colorTheme': 'Default Light Modern',
    'files.autoSave': 'off', 'git.enabled': false, 'seedfall.moment.branchSeeds': '1-7', 'files.watcherExclude': { '**/.seedfall/cache/**': true },
  }, null, 2));
  log(`installed ${path.basename(vsix)} into an isolated profile; workspace ${ws}`);

  // 2. code-server in its own process group, on loopback only.
  const port = await freePort();
  codeServer = spawn(codeServerBin, ['--bind-addr', `127.0.0.1:${port}`, '--auth', 'none', '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust',
    '--user-data-dir', ud, '--extensions-dir', exts, '--config', cfg, ws], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let serverLog = '';
  codeServer.stdout.on('data', (d) => { serverLog += d; });
  codeServer.stderr.on('data', (d) => { serverLog += d; });
  const up = Date.now();
  while (!serverLog.includes('HTTP server listening')) {
    if (Date.now() - up > STEP_MS) throw new Error(`code-server did not start:\n${serverLog}`);
    if (codeServer.exitCode !== null) throw new Error(`code-server exited ${codeServer.exitCode}:\n${serverLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  log(`code-server ${port} up`);

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] });
  page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  page.setDefaultTimeout(STEP_MS);
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.waitForSelector('.monaco-workbench .part.activitybar', { timeout: STEP_MS });
  log('workbench loaded');
  const shot = async (name) => { if (shots) { fs.mkdirSync(shots, { recursive: true }); await page.screenshot({ path: path.join(shots, name) }); } };
  const palette = async (command) => {
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(`>${command}`);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: command }).first().waitFor();
    await page.keyboard.press('Enter');
  };
  const view = (name) => page.locator('.pane', { has: page.locator('.pane-header', { hasText: new RegExp(`^\\s*${name}`, 'i') }) });
  const rows = (name) => view(name).locator('.monaco-list-row');

  const mainGo = path.join(ws, 'main.go');
  const propertyLine = fs.readFileSync(mainGo, 'utf8').split('\n').findIndex((l) => l.includes('"acknowledged writes survive crashes"')) + 1;

  await check('the extension activates (its status bar item shows)', async () => {
    await page.locator('.statusbar-item', { hasText: 'seedfall' }).first().waitFor();
  });

  await check('the daemon runs from the bundled binary, under code-server', async () => {
    const deadline = Date.now() + STEP_MS;
    for (;;) {
      const daemons = descendants(codeServer.pid).filter(([, argv]) => argv[1] === 'lsp' && argv[0].endsWith('/server/seedfall'));
      if (daemons.length === 1) {
        const [, argv] = daemons[0];
        if (!argv[0].startsWith(exts)) throw new Error(`the daemon is ${argv[0]}, not the extension's bundled binary under ${exts}`);
        return;
      }
      if (Date.now() > deadline) throw new Error(`daemons: ${JSON.stringify(daemons)}\n${descendants(codeServer.pid).map(([p, a]) => `${p} ${a.join(' ')}`).join('\n')}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  await check('the four Seedfall views render, and Failures says no failures yet (configs exist)', async () => {
    await page.locator('.activitybar .action-item a[aria-label^="Seedfall"]').click();
    for (const v of ['Failures', 'Corpus', 'Rounds', 'Properties']) await view(v).first().waitFor();
    await view('Failures').getByText('No failures found yet').waitFor();
    await shot('editor-views-empty.png');
  });

  // The Testing view (extension/src/testing.ts): the config and its
  // properties as tests, a sweep run from there, and Replay on the failure.
  const testRows = () => page.locator('.test-explorer .monaco-list-row');
  const testRow = (text) => testRows().filter({ hasText: text }).first();
  const openFile = async (name) => {
    // F1 then a name without `>`: quick open's file search (Ctrl+P may reach Chromium's print).
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill(name);
    // The file itself, not an open editor whose title mentions it (the timeline's does).
    const exact = new RegExp(`^${name.replace('.', '\\.')}$`);
    await page.locator('.quick-input-list .monaco-list-row', { has: page.locator('.label-name', { hasText: exact }) }).first().click();
    await page.locator('.tabs-container .tab.active .label-name', { hasText: exact }).waitFor();
  };
  const goToLine = async (line) => {
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').waitFor();
    await page.keyboard.type(String(line));
    await page.keyboard.press('Enter');
  };
  /** The line number beside the first element matching `selector` in an
   *  editor: the line number whose row holds its vertical middle. */
  const lineOf = (selector) => page.evaluate((sel) => {
    const el = document.querySelector(`.editor-instance .monaco-editor ${sel}`);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    const y = r.top + r.height / 2;
    for (const n of el.closest('.monaco-editor').querySelectorAll('.margin-view-overlays .line-numbers')) {
      const b = n.getBoundingClientRect();
      if (b.top <= y && y < b.bottom) return Number(n.textContent.trim());
    }
    return null;
  }, selector);

  await check("the Testing view lists kvlog's properties before any run", async () => {
    await palette('Testing: Focus on Test Explorer View');
    const config = testRow('kvlog');
    await config.waitFor();
    if ((await config.getAttribute('aria-expanded')) === 'false') await config.locator('.monaco-tl-twistie').click();
    for (const p of ['acknowledged writes survive crashes', 'the client finished its writes']) await testRow(p).waitFor();
  });

  await check(`a sweep run from the Testing view marks the failing property, with its message at line ${propertyLine} of main.go`, async () => {
    const config = testRow('kvlog');
    await config.hover();
    await config.locator('.action-label[aria-label^="Run Test"]').click();
    await testRow('acknowledged writes survive crashes').locator('.codicon-testing-failed-icon').waitFor({ timeout: 120000 });
    await testRow('the client finished its writes').locator('.codicon-testing-passed-icon').waitFor();
    await openFile('main.go');
    // The failed mark in the gutter, at the property's line.
    await goToLine(propertyLine);
    await page.locator('.editor-instance .testing-run-glyph.codicon-testing-failed-icon').first().waitFor();
    const line = await lineOf('.testing-run-glyph.codicon-testing-failed-icon');
    if (line !== propertyLine) throw new Error(`the failed mark is on line ${line}, the property on ${propertyLine}`);
    // The message: the failure block, with the seed and the replay command.
    const message = page.locator('.test-output-peek-tree .monaco-list-row, .test-results .monaco-list-row', { hasText: 'kv: acknowledged writes survive crashes' }).first();
    await message.waitFor();
    await shot('editor-testing.png');
  });

  await check('Replay on the failed property replays its shortest seed and opens the timeline at the failure', async () => {
    const failed = testRow('acknowledged writes survive crashes');
    await failed.hover();
    await failed.locator('.action-label[aria-label^="Debug Test"]').click();
    await page.locator('.tabs-container .tab', { hasText: 'Seedfall timeline: seed 62' }).first().waitFor({ timeout: 120000 });
    const deadline = Date.now() + STEP_MS;
    let seen;
    for (;;) {
      for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
        const p = await f.evaluate(() => {
          const title = document.getElementById('title')?.textContent;
          return title ? { title, detail: document.getElementById('detail')?.textContent ?? '', focused: document.querySelectorAll('.ev-failure.focused').length } : null;
        }).catch(() => null);
        if (p) seen = p;
      }
      if (seen?.focused === 1 && seen.detail.includes('acknowledged writes survive crashes')) break;
      if (Date.now() > deadline) throw new Error(`no timeline opened at the failure; last seen: ${JSON.stringify(seen)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.locator('.activitybar .action-item a[aria-label^="Seedfall"]').click();
  });

  await check('a continuous run sweeps seedfall.testing.continuousSeeds when main.go is saved', async () => {
    const before = fs.readFileSync(mainGo, 'utf8');
    const lastRun = path.join(ws, '.seedfall/last-run/kvlog.json');
    const seedsRun = () => { try { return JSON.parse(fs.readFileSync(lastRun, 'utf8')).seeds; } catch { return undefined; } };
    const config = testRow('kvlog');
    const toggleContinuous = async () => {
      await config.hover();
      await config.locator('.action-label[aria-label*="Continuous Run"]').click();
    };
    // An edit at the end of main.go's first line (a comment), saved.
    const saveLine1 = async (edit) => {
      await page.locator('.tabs-container .tab', { hasText: 'main.go' }).first().click();
      await goToLine(1);
      await page.keyboard.press('End');
      await edit();
      await page.keyboard.press('Control+S');
    };
    await palette('Testing: Focus on Test Explorer View');
    await toggleContinuous();
    await saveLine1(() => page.keyboard.insertText(' '));
    for (const t0 = Date.now(); seedsRun() !== '1-20'; await new Promise((r) => setTimeout(r, 250))) {
      if (Date.now() - t0 > 120000) throw new Error(`no sweep of seeds 1-20 after the save; the last run swept ${seedsRun()}`);
    }
    await toggleContinuous();
    // main.go as it was (saved again with continuous run off).
    await saveLine1(() => page.keyboard.press('Backspace'));
    await page.locator('.tabs-container .tab.active.dirty').waitFor({ state: 'detached' });
    if (fs.readFileSync(mainGo, 'utf8') !== before) throw new Error('main.go is not as it was');
    await page.locator('.activitybar .action-item a[aria-label^="Seedfall"]').click();
  });

  await check('"Run Sweep" from the palette fills Failures and Properties', async () => {
    await palette('Seedfall: Run Sweep');
    // The continuous run above swept 1-20: this sweep's 100 runs show in the counts.
    await rows('Properties').filter({ hasText: 'acknowledged writes survive crashes' }).filter({ hasText: '/100' }).first().waitFor({ timeout: 120000 });
    await rows('Failures').filter({ hasText: 'seed 62' }).first().waitFor();
  });

  await check(`the failure is an Error squiggle on line ${propertyLine} of main.go, and in Problems`, async () => {
    await rows('Failures').filter({ hasText: 'seed 62' }).first().click();
    const editor = page.locator('.editor-instance .monaco-editor').first();
    await editor.locator('.squiggly-error').first().waitFor();
    const lineOfSquiggle = await page.evaluate(() => {
      const sq = document.querySelector('.editor-instance .monaco-editor .view-overlays .squiggly-error');
      const top = sq?.parentElement?.style.top;
      for (const d of document.querySelectorAll('.editor-instance .monaco-editor .margin-view-overlays > div')) {
        if (d.style.top === top) return d.querySelector('.line-numbers')?.textContent?.trim();
      }
      return null;
    });
    if (Number(lineOfSquiggle) !== propertyLine) throw new Error(`the squiggle is on line ${lineOfSquiggle}, the property on ${propertyLine}`);
    await page.keyboard.press('Control+Shift+M');
    const problem = page.locator('.markers-panel .monaco-list-row', { hasText: 'acknowledged writes survive crashes' }).first();
    await problem.waitFor();
    const label = await problem.getAttribute('aria-label');
    if (!new RegExp(`Ln ${propertyLine}\\b|line ${propertyLine}\\b|${propertyLine}:`, 'i').test(`${label} ${await problem.textContent()}`)) {
      throw new Error(`the problem does not say line ${propertyLine}: ${label}`);
    }
    await shot('editor-failure.png');
  });

  await check('the "Replay seed 62 | Shrink | Inspect | Pin" lenses render on the property line', async () => {
    const lens = page.locator('.editor-instance .codelens-decoration', { hasText: 'Replay seed 62' }).first();
    // VS Code 1.100 sometimes keeps an editor's lenses from before a
    // refresh it was sent while the editor was busy (issue 35's note): the
    // daemon answers them right, and a reopened editor shows them. Said in
    // the output when it happens, so it is seen, not hidden.
    if (!(await lens.waitFor({ timeout: 15000 }).then(() => true, () => false))) {
      log('     main.go showed no lenses after 15 s: reopening it');
      await page.locator('.tabs-container .tab', { hasText: 'main.go' }).first().click();
      await page.keyboard.press('Control+W');
      await page.locator('.tabs-container .tab', { hasText: 'main.go' }).first().waitFor({ state: 'detached' });
      await rows('Failures').filter({ hasText: 'seed 62' }).first().click();
    }
    await lens.waitFor();
    const text = (await lens.textContent()).replace(/\s+/g, ' ').trim();
    if (!/Replay seed 62 \| Shrink \| Inspect \| Pin/.test(text)) throw new Error(`lens text: ${text}`);
  });

  await check('"Replay seed 62" shows the replay', async () => {
    await page.locator('.editor-instance .codelens-decoration a', { hasText: 'Replay seed 62' }).first().click();
    const tab = page.locator('.tabs-container .tab', { hasText: 'Replay seed 62' }).first();
    await tab.waitFor();
    const doc = page.locator('.editor-instance .view-lines', { hasText: 'seedfall replay seed 62 (seedfall.json): FAIL' }).first();
    await doc.waitFor();
    if (!/FAIL seed 62 at t=\d/.test((await doc.textContent()).replace(/\u00a0/g, ' '))) throw new Error('the replay document does not say how seed 62 failed');
    await shot('editor-replay.png');
  });

  let timelineFrame, momentFrame;
  await check('"Inspect" opens the timeline of the run', async () => {
    await page.locator('.tabs-container .tab', { hasText: 'main.go' }).first().click();
    await page.locator('.editor-instance .codelens-decoration a', { hasText: 'Inspect' }).first().click();
    await page.locator('.tabs-container .tab', { hasText: 'Seedfall timeline: seed 62' }).first().waitFor();
    // The page lives in the webview's nested frames, never in the workbench's own.
    const deadline = Date.now() + STEP_MS;
    let frame, seen;
    for (;;) {
      for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
        const p = await f.evaluate(() => {
          const title = document.getElementById('title')?.textContent;
          return title ? { title, marks: document.querySelectorAll('#chart svg circle').length, lanes: [...document.querySelectorAll('#chart .lane-label')].map((l) => l.textContent) } : null;
        }).catch(() => null);
        if (p) seen = p;
        if (p && p.title === 'seedfall timeline: seed 62' && p.marks > 10 && p.lanes.includes('kv')) frame = f;
      }
      if (frame) break;
      if (Date.now() > deadline) throw new Error(`no webview frame shows seed 62's events; last seen: ${JSON.stringify(seen)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    // Clicking the failure shows its details.
    await frame.locator('#chart .ev-failure').first().click();
    await frame.locator('#detail', { hasText: 'acknowledged writes survive crashes' }).waitFor();
    await shot('editor-timeline.png');
    timelineFrame = frame;
  });

  await check('"Open at this moment" on the crash shows the crashed node\'s disk; Back steps to the moment before it', async () => {
    if (!timelineFrame) throw new Error('no timeline to start from (the check before failed)');
    await timelineFrame.locator('#chart .ev-crash').last().click();
    await timelineFrame.locator('#at:not([disabled])').click();
    await page.locator('.tabs-container .tab', { hasText: 'Seedfall moment: seed 62' }).first().waitFor();
    // The kv node's section in the moment's frame: its status and its log's state.
    const kvState = async () => {
      for (const f of page.frames().filter((f) => f !== page.mainFrame())) {
        const p = await f.evaluate(() => {
          const kv = document.querySelector('section.node[data-node="kv"]');
          if (!kv) return null;
          const log = kv.querySelector('tr.entry[data-path="/data/kv.log"]');
          return { frame: true, title: document.getElementById('title').textContent, status: kv.querySelector('.status').textContent, log: log?.getAttribute('data-state'), files: kv.querySelectorAll('table tr').length };
        }).catch(() => null);
        if (p) return { f, ...p };
      }
      return undefined;
    };
    const waitState = async (ok, what) => {
      const deadline = Date.now() + STEP_MS;
      let seen;
      for (;;) {
        seen = await kvState();
        if (seen && ok(seen)) return seen;
        if (Date.now() > deadline) throw new Error(`the moment view never showed ${what}; last seen: ${JSON.stringify(seen && { ...seen, f: undefined })}`);
        await new Promise((r) => setTimeout(r, 250));
      }
    };
    const after = await waitState((s) => s.status.startsWith('crashed') && s.log === 'durable', 'kv crashed with /data/kv.log durable');
    await shot('editor-moment.png');
    // The crash lands inside a write (faults.crash.during_disk_op), so the
    // moment before it is the last event before that step: kv is up there.
    const eventOf = (title) => Number(/after event (\d+)/.exec(title)?.[1]);
    await after.f.locator('#back').click();
    await waitState((s) => !s.status.startsWith('crashed') && eventOf(s.title) < eventOf(after.title), 'kv up, at an event before the crash');
    momentFrame = after.f;
  });

  await check('"Explore" from the palette fills Corpus and Rounds', async () => {
    await palette('Seedfall: Explore');
    await rows('Rounds').filter({ hasText: 'round 1' }).first().waitFor({ timeout: 120000 });
    const entry = rows('Corpus').filter({ hasText: /seed \d+ \(/ }).first();
    await entry.waitFor();
    if (shots) {
      await entry.click();
      await rows('Rounds').filter({ hasText: 'round 1' }).first().click();
      await page.waitForTimeout(300);
    }
    await shot('editor-explore.png');
  });

  await check('after the guest is fixed and the sweep rerun, the diagnostic clears', async () => {
    const fixed = fs.readFileSync(mainGo, 'utf8').replace('\tif s.fixed {\n\t\tif err := s.log.Sync()', '\tif true {\n\t\tif err := s.log.Sync()');
    if (!fixed.includes('if true {')) throw new Error('could not apply the fix to main.go');
    fs.writeFileSync(mainGo, fixed);
    await palette('Seedfall: Run Sweep');
    await view('Failures').getByText('No failures found yet').waitFor({ timeout: 120000 });
    await page.locator('.editor-instance .squiggly-error').first().waitFor({ state: 'detached' });
    const left = await page.locator('.markers-panel .monaco-list-row', { hasText: 'acknowledged writes survive crashes' }).count();
    if (left !== 0) throw new Error(`${left} problems remain`);
  });

  // After the fix: the branch's seeds would otherwise leave failures of
  // their own (a plain sweep does not clear a branched run's failure).
  await check('"Branch from here" in the moment view sweeps seedfall.moment.branchSeeds from that moment', async () => {
    if (!momentFrame) throw new Error('no moment view to branch from (a check before failed)');
    const lastRun = path.join(ws, '.seedfall/last-run/kvlog.json');
    fs.rmSync(lastRun, { force: true });
    await momentFrame.locator('#branch:not([disabled])').click();
    for (const t0 = Date.now(); ; await new Promise((r) => setTimeout(r, 250))) {
      let seeds;
      try { seeds = JSON.parse(fs.readFileSync(lastRun, 'utf8')).seeds; } catch { /* not written yet */ }
      if (seeds === '1-7') break;
      if (Date.now() - t0 > 120000) throw new Error(`Branch from here ran no sweep of seeds 1-7; the last run swept ${seeds}`);
    }
  });

  // After the fix: nothing fails, so the exploration runs to its budget
  // (2m) unless the cancel stops it.
  await check('Explore run from the Testing view, then cancelled, stops the daemon\'s exploration', async () => {
    await palette('Testing: Focus on Test Explorer View');
    const config = testRow('kvlog');
    await config.click({ button: 'right' });
    // The context menu by keys (its last entry), and the profile by name.
    const using = page.locator('.context-view .action-item', { hasText: 'Execute Using Profile' }).first();
    await using.waitFor();
    await using.hover();
    await page.keyboard.press('Enter');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor();
    await input.fill('Explore');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Explore' }).first().waitFor();
    await page.keyboard.press('Enter');
    // The daemon's job shows in the status bar while it runs (a 2m budget).
    const busy = page.locator('.statusbar-item .codicon-sync');
    await busy.first().waitFor({ timeout: STEP_MS });
    const t0 = Date.now();
    // The Testing view's own stop button (the palette has no cancel command).
    await page.locator('.action-label[aria-label^="Cancel Test Run"]').first().click();
    await busy.first().waitFor({ state: 'detached', timeout: 30000 });
    const stopped = Date.now() - t0;
    log(`     the exploration stopped ${stopped} ms after the cancel (its budget was 2m)`);
  });

  // Last: lenses of an editor hidden while its config was invalid can stay
  // stale in VS Code 1.100 until their file is reopened (see issue 35's note).
  await check('an unknown key typed into seedfall.json is underlined before it is saved, and node names complete in faults', async () => {
    const configFile = path.join(ws, 'seedfall.json');
    const onDisk = fs.readFileSync(configFile, 'utf8');
    // Closes the edited config without saving it (the file must stay as it was).
    const discard = async () => {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+W');
      await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Don.t Save$/ }).click();
      await page.locator('.tabs-container .tab .label-name', { hasText: /^seedfall\.json$/ }).waitFor({ state: 'detached' });
    };
    // Files open beside the code, not in the timeline's group.
    await page.locator('.tabs-container .tab', { hasText: 'main.go' }).first().click();
    await openFile('seedfall.json');
    await page.locator('.editor-instance .view-line', { hasText: '"duration"' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.insertText('\n  "duratoin": "1s",');
    await page.locator('.editor-instance .monaco-editor .squiggly-error').first().waitFor();
    const line = await lineOf('.squiggly-error');
    const want = onDisk.split('\n').findIndex((l) => l.includes('"duration"')) + 2;
    if (line !== want) throw new Error(`the squiggle is on line ${line}, the typed key on ${want}`);
    await page.keyboard.press('Control+Shift+M');
    await page.locator('.markers-panel .monaco-list-row', { hasText: 'unknown field "duratoin"' }).first().waitFor();
    await palette('View: Hide Panel');
    await page.locator('.tabs-container .tab', { hasText: 'seedfall.json' }).first().click();
    await discard();
    // A fault's nodes: the cluster's node names are offered.
    await openFile('seedfall.json');
    await page.locator('.editor-instance .view-line', { hasText: '"faults"' }).first().click();
    await page.keyboard.press('End');
    await page.keyboard.insertText('\n    "pause": { "rate": 1, "duration": "5ms", "nodes": ["');
    await page.keyboard.insertText('"] },');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Control+Space');
    await page.locator('.suggest-widget .monaco-list-row', { hasText: 'kv' }).first().waitFor();
    await shot('editor-config.png');
    await discard();
    if (fs.readFileSync(configFile, 'utf8') !== onDisk) throw new Error('seedfall.json changed on disk');
  });
}

let fatal;
try {
  await main();
} catch (e) {
  fatal = e;
  results.push(['the end-to-end run could not continue', false]);
  log(`FAIL ${e.stack || e}`);
} finally {
  await stopAll();
}
const passed = results.filter(([, ok]) => ok).length;
const failed = results.length - passed;
console.log(`e2e (code-server 4.100.3): ${passed} passed, ${failed} failed in ${elapsed()}`);
if (!failed && scratch) fs.rmSync(scratch, { recursive: true, force: true });
else if (scratch) console.log(`kept ${scratch} for a look`);
process.exit(failed || fatal ? 1 : 0);
