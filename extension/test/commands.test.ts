// Commands: routed through the daemon, with quick picks for what is missing.
import { describe, it, expect, vi } from 'vitest';
import * as vscode from 'vscode';
import { createCommands, Deps } from '../src/commands';
import { StatusBar } from '../src/status';

function deps(over: Partial<Deps> = {}): Deps & { calls: [string, Record<string, unknown>][] } {
  const calls: [string, Record<string, unknown>][] = [];
  return {
    calls,
    execute: async (c, a) => { calls.push([c, a]); return { exit: 0, result: {} }; },
    fetch: async <T>() => [] as unknown as T,
    configs: async () => ['/ws/a/seedfall.json', '/ws/b/seedfall.json'],
    refresh: async () => undefined,
    restart: async () => undefined,
    settings: { seeds: () => '1-50', rounds: () => 12 },
    ...over,
  };
}

describe('commands', () => {
  it('Run Sweep asks which config when there are several, then runs it in the daemon', async () => {
    vi.mocked(vscode.window.showQuickPick).mockResolvedValueOnce('/ws/b/seedfall.json' as never);
    const d = deps();
    await createCommands(d)['seedfall.ui.runSweep']();
    expect(d.calls).toEqual([['seedfall.run', { config: '/ws/b/seedfall.json', seeds: '1-50' }]]);
  });

  it('Explore uses the configured rounds', async () => {
    const d = deps({ configs: async () => ['/ws/only/seedfall.json'] });
    await createCommands(d)['seedfall.ui.explore']();
    expect(d.calls).toEqual([['seedfall.explore', { config: '/ws/only/seedfall.json', rounds: 12 }]]);
  });

  it('Replay Seed... asks for a seed when none is given', async () => {
    const d = deps({ configs: async () => ['/ws/only/seedfall.json'] });
    vi.mocked(vscode.window.showInputBox).mockResolvedValueOnce('17');
    await createCommands(d)['seedfall.ui.replay']();
    expect(d.calls).toEqual([['seedfall.replay', { config: '/ws/only/seedfall.json', seed: 17 }]]);
  });

  it('inline actions on a failure item carry its schedule', async () => {
    const d = deps();
    const item = { failure: { config: '/ws/a/seedfall.json', seed: 6, faults: '/f/faults.json' } };
    await createCommands(d)['seedfall.ui.shrink'](item);
    await createCommands(d)['seedfall.ui.inspect'](item);
    expect(d.calls[0]).toEqual(['seedfall.shrink', { config: '/ws/a/seedfall.json', seed: 6, faults: '/f/faults.json' }]);
    expect(d.calls[1]).toEqual(['seedfall.inspect', { config: '/ws/a/seedfall.json', seed: 6, faults: '/f/faults.json' }]);
  });

  it('a dismissed quick pick runs nothing', async () => {
    vi.mocked(vscode.window.showQuickPick).mockResolvedValueOnce(undefined as never);
    const d = deps();
    await createCommands(d)['seedfall.ui.runSweep']();
    expect(d.calls).toEqual([]);
  });

  it('the status bar shows what is running', () => {
    const s = new StatusBar();
    s.update({ message: 'exploring: round 12, corpus 5, 0 failures', running: [{ token: 't', title: 'seedfall explore' }] });
    expect(s.item.text).toBe('$(sync~spin) exploring: round 12, corpus 5, 0 failures');
    s.update({ message: '', running: [] });
    expect(s.item.text).toBe('$(beaker) seedfall');
  });
});
