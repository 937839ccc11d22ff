// Every command shows what it did: the tool's text in a document, a
// timeline for Inspect, a summary for a sweep, an error notification when
// the daemon refuses or fails.
import { describe, it, expect, vi } from 'vitest';
import * as vscode from 'vscode';
import { documentText, runCommand, subject, Presenter } from '../src/results';

function presenter(): Presenter & { docs: [string, string][]; timelines: [string, unknown[]][]; lines: string[] } {
  const docs: [string, string][] = [];
  const timelines: [string, unknown[]][] = [];
  const lines: string[] = [];
  const log = (l: string) => { lines.push(l); };
  return {
    docs, timelines, lines,
    output: { info: log, error: log, show: () => undefined } as unknown as vscode.LogOutputChannel,
    showDocument: async (t, text) => { docs.push([t, text]); },
    openTimeline: (t, e) => { timelines.push([t, e]); },
    showFailures: () => undefined,
  };
}

describe('results', () => {
  it('a replay shows its text in a document named for the seed', async () => {
    const p = presenter();
    const r = await runCommand('seedfall.replay', { config: '/ws/kv/seedfall.json', seed: 2 }, async () => ({ exit: 1, verdict: 'fail', text: 'FAIL seed 2 at t=1ms\n' }), p);
    expect(r).toEqual({ exit: 1, verdict: 'fail', text: 'FAIL seed 2 at t=1ms\n' });
    expect(p.docs).toEqual([['Replay seed 2 (seedfall.json).log', 'seedfall replay seed 2 (seedfall.json): FAIL (exit 1)\n\nFAIL seed 2 at t=1ms\n']]);
    expect(vscode.window.withProgress).toHaveBeenCalled();
  });

  it('inspect opens the timeline with the events', async () => {
    const p = presenter();
    await runCommand('seedfall.inspect', { config: '/ws/kv/seedfall.json', seed: 6 }, async () => ({ exit: 1, result: [{ step: 0, time_ns: 0, event: 'start' }] }), p);
    expect(p.timelines).toEqual([['seed 6', [{ step: 0, time_ns: 0, event: 'start' }]]]);
  });

  it('a failing sweep says how many failed', async () => {
    const p = presenter();
    vi.mocked(vscode.window.showWarningMessage).mockResolvedValueOnce(undefined as never);
    await runCommand('seedfall.run', { config: '/ws/kv/seedfall.json', seeds: '1-50' }, async () => ({ exit: 1, result: { runs: 50, failed: 2, failures: [{ seed: 2 }, { seed: 4 }] } }), p);
    expect(vscode.window.showWarningMessage).toHaveBeenCalledWith('Seedfall: 2 of 50 runs failed (seeds 2, 4)', 'Show Failures');
  });

  it('an error from the daemon is a notification, not silence', async () => {
    const p = presenter();
    vi.mocked(vscode.window.showErrorMessage).mockResolvedValueOnce(undefined as never);
    const r = await runCommand('seedfall.shrink', { seed: 3 }, async () => { throw new Error('seedfall.shrink needs a config'); }, p);
    expect(r).toBeUndefined();
    expect(vscode.window.showErrorMessage).toHaveBeenCalledWith('Seedfall: Shrink seed 3 failed: seedfall.shrink needs a config', 'Show Output');
    expect(p.lines.some((l) => l.includes('failed: seedfall.shrink needs a config'))).toBe(true);
  });

  it('a long replay puts its verdict first, then everything it printed', () => {
    const events = Array.from({ length: 40 }, (_, i) => `  ${i}ms  kv  | line ${i}`).join('\n');
    const text = `${events}\n\nFAIL seed 2 at t=40ms\n  kv: lost\ntrace hash ab\n`;
    const doc = documentText('seedfall.replay', 'Replay seed 2', { exit: 1, verdict: 'fail', text });
    expect(doc.startsWith('seedfall replay seed 2: FAIL (exit 1)\n\nFAIL seed 2 at t=40ms\n  kv: lost\ntrace hash ab\n\n-- everything it printed --\n\n  0ms')).toBe(true);
    expect(doc.endsWith(text)).toBe(true);
  });

  it('subjects name the seed and the config', () => {
    expect(subject('seedfall.run', { config: '/a/b/seedfall.fixed.json', seeds: '1-9' })).toBe('seeds 1-9 of seedfall.fixed.json');
    expect(subject('seedfall.pin', { faults: '/x/faults.json' })).toBe('a schedule');
  });
});
