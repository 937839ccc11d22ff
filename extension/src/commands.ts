// commands.ts: every palette command as a factory over what it needs, with
// quick picks for what is missing (which config, which seed). All work is
// routed through the daemon (workspace/executeCommand), so the editor and
// the CLI write the same artifacts; `execute` also shows what each did
// (results.ts), the same for a palette command as for a lens.
import * as vscode from 'vscode';
import type { Failure } from './lsp_ext';
import { AT_THE_END } from './moment';

export interface Deps {
  /** Executes a daemon command, e.g. ('seedfall.replay', {config, seed}), and shows its result. */
  execute(command: string, args: Record<string, unknown>): Promise<unknown>;
  fetch<T>(method: string, params?: unknown): Promise<T>;
  /** The workspace's configs, as the daemon found them. */
  configs(): Promise<string[]>;
  refresh(): Promise<void>;
  restart(): Promise<void>;
  settings: { seeds(): string; rounds(): number };
  /** The shortest failing run of a Testing view item (a failure message's actions). */
  failureOfTest?(test: unknown): Failure | undefined;
  /** The moment view of a run at one event (moment.ts). */
  openMoment?(target: { config: string; seed?: number; faults?: string }, atEvent: number): Promise<void>;
}

export type Target = { config?: string; seed?: number; faults?: string };

/** A tree item of the Failures view, a failure message of the Testing
 *  view ({test, message}), or a plain target object. */
function targetOf(arg: unknown, d?: Deps): Target {
  if (arg && typeof arg === 'object' && 'failure' in arg) {
    const f = (arg as { failure: Failure }).failure;
    return { config: f.config, seed: f.seed, faults: f.faults };
  }
  if (arg && typeof arg === 'object' && 'test' in arg && 'message' in arg) {
    const f = d?.failureOfTest?.((arg as { test: unknown }).test);
    return f ? { config: f.config, seed: f.seed, faults: f.faults } : {};
  }
  return (arg as Target) ?? {};
}

export async function pickConfig(d: Deps, given?: string): Promise<string | undefined> {
  if (given) return given;
  const all = await d.configs();
  if (all.length === 0) {
    void vscode.window.showErrorMessage('Seedfall: no seedfall.json in this workspace');
    return undefined;
  }
  if (all.length === 1) return all[0];
  return vscode.window.showQuickPick(all, { placeHolder: 'Which seedfall config?' });
}

async function pickRun(d: Deps, arg: unknown): Promise<Target | undefined> {
  const t = targetOf(arg, d);
  const config = await pickConfig(d, t.config);
  if (!config) return undefined;
  if (t.seed !== undefined || t.faults) return { ...t, config };
  const failures = (await d.fetch<Failure[]>('seedfall/failures')).filter((f) => f.config === config);
  if (failures.length) {
    const picked = await vscode.window.showQuickPick(
      [...failures.map((f) => ({ label: `seed ${f.seed}`, description: `${f.node}: ${f.message}`, f })), { label: 'Another seed...', description: '', f: undefined }],
      { placeHolder: 'Which run?' },
    );
    if (!picked) return undefined;
    if (picked.f) return { config, seed: picked.f.seed, faults: picked.f.faults };
  }
  const text = await vscode.window.showInputBox({ prompt: 'Seed', validateInput: (v) => (/^\d+$/.test(v.trim()) ? undefined : 'a seed is a whole number') });
  if (!text) return undefined;
  return { config, seed: Number(text.trim()) };
}

export function createCommands(d: Deps): Record<string, (...args: unknown[]) => Promise<void>> {
  const onTarget = (command: string) => async (arg?: unknown) => {
    const t = await pickRun(d, arg);
    if (!t) return;
    await d.execute(command, t);
  };
  return {
    'seedfall.ui.runSweep': async (arg?: unknown) => {
      const config = await pickConfig(d, targetOf(arg).config);
      if (!config) return;
      await d.execute('seedfall.run', { config, seeds: d.settings.seeds() });
    },
    'seedfall.ui.explore': async (arg?: unknown) => {
      const config = await pickConfig(d, targetOf(arg).config);
      if (!config) return;
      await d.execute('seedfall.explore', { config, rounds: d.settings.rounds() });
    },
    'seedfall.ui.stop': async () => {
      await d.execute('seedfall.stop', {});
    },
    'seedfall.ui.replay': onTarget('seedfall.replay'),
    'seedfall.ui.shrink': onTarget('seedfall.shrink'),
    'seedfall.ui.cause': onTarget('seedfall.cause'),
    'seedfall.ui.pin': onTarget('seedfall.pin'),
    'seedfall.ui.inspect': onTarget('seedfall.inspect'),
    'seedfall.ui.timeline': onTarget('seedfall.inspect'),
    // A failure's moment is the world as its run ended; the view steps back.
    'seedfall.ui.moment': async (arg?: unknown) => {
      const t = await pickRun(d, arg);
      if (!t?.config || !d.openMoment) return;
      await d.openMoment({ config: t.config, seed: t.seed, faults: t.faults }, AT_THE_END);
    },
    'seedfall.ui.restartServer': async () => d.restart(),
    'seedfall.ui.refresh': async () => d.refresh(),
  };
}
