// moment.ts: the webview standing inside one run (media/moment.html): every
// node at one moment, stepped back and forward by the daemon's
// `seedfall.inspect` with `at_event`, and "Branch from here", a sweep whose
// seeds share this run up to that moment (`seedfall.run` with `from`).
import * as vscode from 'vscode';
import * as path from 'path';
import type { Answer } from './testmodel';
import { pageHtml } from './timeline';

/** The run a moment is of: a config and a seed, or a schedule file. */
export interface MomentTarget { config: string; seed?: number; faults?: string }

export interface MomentDeps {
  /** A daemon command, answered raw (no presentation). */
  command(command: string, args: Record<string, unknown>): Promise<Answer | undefined>;
  /** A sweep run the way the palette runs one: shown, trees refreshed. */
  execute(command: string, args: Record<string, unknown>): Promise<unknown>;
  /** Seeds a branch runs (setting `seedfall.moment.branchSeeds`). */
  branchSeeds(): string;
  output: vscode.LogOutputChannel;
}

/** A moment as `inspect -at-event -json` prints it (docs/inspect.md). */
export interface Moment {
  event: 'moment'; seed: number; time_ns: number; step: number; events_from: number; events_to: number; events_total: number; end: boolean;
  nodes: { node: string; status: string; disk: { path: string; state: string }[] }[];
  branch?: { from: string; prefix_seed: number } | null; branch_why_not?: string;
}

/** Past every event: the world as the run ended (a failure's moment). */
export const AT_THE_END = 1_000_000_000;

/** The moment `atEvent` of `target`'s run, or why there is none. */
export async function fetchMoment(d: MomentDeps, target: MomentTarget, atEvent: number): Promise<Moment> {
  const a = await d.command('seedfall.inspect', { config: target.config, seed: target.seed, faults: target.faults, at_event: Math.max(0, atEvent) });
  if (a?.cancelled) throw new Error('cancelled');
  const lines = Array.isArray(a?.result) ? (a?.result as { event?: string }[]) : [];
  const m = lines.find((l) => l.event === 'moment');
  if (!m) throw new Error(`no moment in the daemon's answer (exit ${a?.exit})`);
  return m as Moment;
}

/** Opens the moment view at event `atEvent` of `target`'s run. */
export async function openMoment(extensionPath: string, d: MomentDeps, target: MomentTarget, atEvent: number): Promise<vscode.WebviewPanel | undefined> {
  let moment: Moment;
  try {
    moment = await fetchMoment(d, target, atEvent);
  } catch (e) {
    void vscode.window.showErrorMessage(`Seedfall: cannot stand at that moment: ${e instanceof Error ? e.message : e}`);
    return undefined;
  }
  const title = `Seedfall moment: seed ${moment.seed} (${path.basename(path.dirname(target.config))})`;
  const panel = vscode.window.createWebviewPanel('seedfall.moment', title, vscode.ViewColumn.Beside, { enableScripts: true, localResourceRoots: [] });
  panel.webview.html = pageHtml(extensionPath, 'moment.html', moment);
  panel.webview.onDidReceiveMessage(async (m: { type: string; at_event?: number; from?: string; prefix_seed?: number }) => {
    if (m.type === 'step' && typeof m.at_event === 'number') {
      try {
        void panel.webview.postMessage({ type: 'moment', moment: await fetchMoment(d, target, m.at_event) });
      } catch (e) {
        void panel.webview.postMessage({ type: 'error', text: `cannot step there: ${e instanceof Error ? e.message : e}` });
      }
    } else if (m.type === 'branch' && m.from && m.prefix_seed !== undefined) {
      const seeds = d.branchSeeds();
      d.output.info(`branching seeds ${seeds} from seed ${m.prefix_seed}'s run at ${m.from} (${target.config})`);
      await d.execute('seedfall.run', { config: target.config, seeds, from: m.from, prefix_seed: m.prefix_seed });
    }
  });
  return panel;
}
