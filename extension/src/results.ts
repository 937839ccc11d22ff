// results.ts: every daemon command shows what it did. While it runs, a
// progress item in the status bar; when it ends, its result where a person
// reads it: a sweep's summary, a replay's or a shrink's text in a read-only
// document beside the code, a timeline for Inspect; when it fails, an
// error notification. Everything also goes to the output channel.
import * as vscode from 'vscode';
import type { TimelineEvent } from './lsp_ext';
import type { MomentTarget } from './moment';

export interface Presenter {
  output: vscode.LogOutputChannel;
  /** Shows text in a read-only document titled `title`. */
  showDocument(title: string, text: string): Promise<void>;
  /** `target`: the run, so the timeline can stand at its moments. */
  openTimeline(title: string, events: TimelineEvent[], target?: MomentTarget): void;
  /** Reveals the Failures view. */
  showFailures(): void;
}

type Answer = { exit?: number; verdict?: string; text?: string; cancelled?: boolean; result?: unknown; stopped?: number };

const verbs: Record<string, string> = {
  'seedfall.run': 'Sweeping', 'seedfall.explore': 'Exploring', 'seedfall.replay': 'Replaying', 'seedfall.shrink': 'Shrinking',
  'seedfall.inspect': 'Inspecting', 'seedfall.cause': 'Finding the cause of', 'seedfall.pin': 'Pinning', 'seedfall.stop': 'Stopping',
};

/** What the command acts on, for titles: "seed 2 of seedfall.json". */
export function subject(command: string, args: Record<string, unknown>): string {
  const config = typeof args.config === 'string' ? args.config.split(/[\\/]/).pop() : undefined;
  const seed = args.seed !== undefined ? `seed ${args.seed}` : args.faults ? 'a schedule' : undefined;
  if (command === 'seedfall.run') return `seeds ${args.seeds ?? '1-100'}${config ? ` of ${config}` : ''}`;
  return [seed, config && `(${config})`].filter(Boolean).join(' ');
}

function title(command: string): string {
  const name = command.replace(/^seedfall\./, '');
  return name[0].toUpperCase() + name.slice(1);
}

export async function runCommand(command: string, args: Record<string, unknown>, send: () => Promise<unknown>, p: Presenter): Promise<unknown> {
  const what = subject(command, args);
  const label = `${title(command)} ${what}`.trim();
  p.output.info(`${label}: started`);
  let answer: Answer | undefined;
  try {
    answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: `Seedfall: ${verbs[command] ?? 'Running'} ${what}` },
      async () => (await send()) as Answer | undefined,
    );
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    p.output.error(`${label} failed: ${message}`);
    void vscode.window.showErrorMessage(`Seedfall: ${label} failed: ${message}`, 'Show Output').then((b) => b && p.output.show(true));
    return undefined;
  }
  present(command, label, args, answer ?? {}, p);
  return answer;
}

function present(command: string, label: string, args: Record<string, unknown>, a: Answer, p: Presenter): void {
  if (a.cancelled) {
    p.output.info(`${label}: cancelled`);
    void vscode.window.showInformationMessage(`Seedfall: ${label} was cancelled`);
    return;
  }
  if (command === 'seedfall.stop') {
    p.output.info(`stopped ${a.stopped ?? 0} job(s)`);
    void vscode.window.showInformationMessage(`Seedfall: stopped ${a.stopped ?? 0} running job(s)`);
    return;
  }
  if (command === 'seedfall.inspect') {
    const events = (Array.isArray(a.result) ? a.result : []) as TimelineEvent[];
    p.output.info(`${label}: ${events.length} events`);
    const target = typeof args.config === 'string' ? { config: args.config, seed: args.seed as number | undefined, faults: args.faults as string | undefined } : undefined;
    p.openTimeline(subject(command, { seed: args.seed, faults: args.faults }) || 'run', events, target);
    return;
  }
  if (typeof a.text === 'string') {
    // replay, shrink, cause, pin: the tool's own words.
    p.output.info(`== ${label} (exit ${a.exit})\n${a.text}`);
    void p.showDocument(`${label}.log`, documentText(command, label, a));
    return;
  }
  const r = (a.result ?? {}) as { runs?: number; failed?: number; failures?: { seed: number }[]; rounds?: unknown[]; stop?: string };
  p.output.info(`== ${label}\n${JSON.stringify(a.result, null, 2)}`);
  if (command === 'seedfall.run') {
    const failed = r.failed ?? r.failures?.length ?? 0;
    const seeds = (r.failures ?? []).slice(0, 5).map((f) => f.seed).join(', ');
    if (failed > 0) {
      void vscode.window.showWarningMessage(`Seedfall: ${failed} of ${r.runs} runs failed (seeds ${seeds}${failed > 5 ? ', ...' : ''})`, 'Show Failures').then((b) => b && p.showFailures());
    } else {
      void vscode.window.showInformationMessage(`Seedfall: all ${r.runs} runs passed`);
    }
  } else if (command === 'seedfall.explore') {
    const n = r.rounds?.length ?? 0;
    void vscode.window.showInformationMessage(`Seedfall: explored ${n} round${n === 1 ? '' : 's'}${r.stop ? ` (${r.stop})` : ''}`);
  }
}

/** Lines after which a tool's closing summary is also shown first. */
const SUMMARY_FIRST_AFTER_LINES = 30;

/** A tool's text as a document: a heading, and for long output (a replay
 * prints every event before its verdict) the closing paragraph first. */
export function documentText(command: string, label: string, a: Answer): string {
  const text = a.text ?? '';
  const verdict = command === 'seedfall.replay' ? (a.verdict === 'pass' ? ': PASS' : ': FAIL') : '';
  const heading = `seedfall ${command.replace(/^seedfall\./, '')} ${label.slice(label.indexOf(' ') + 1)}${verdict} (exit ${a.exit})`;
  const lines = text.trimEnd().split('\n');
  const cut = text.trimEnd().lastIndexOf('\n\n');
  if (lines.length <= SUMMARY_FIRST_AFTER_LINES || cut < 0) return `${heading}\n\n${text}`;
  return `${heading}\n\n${text.trimEnd().slice(cut + 2)}\n\n-- everything it printed --\n\n${text}`;
}

/** Read-only documents for command output (`seedfall-output:` URIs). */
export class OutputDocuments implements vscode.TextDocumentContentProvider {
  static readonly scheme = 'seedfall-output';
  private texts = new Map<string, string>();
  private changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  /** Bound on documents kept; the oldest go first. */
  static readonly KEPT_MAX = 50;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.path) ?? '';
  }

  async show(title: string, text: string): Promise<void> {
    const uri = vscode.Uri.from({ scheme: OutputDocuments.scheme, path: `/${title}` });
    this.texts.delete(uri.path);
    this.texts.set(uri.path, text);
    while (this.texts.size > OutputDocuments.KEPT_MAX) this.texts.delete(this.texts.keys().next().value as string);
    this.changed.fire(uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true, preserveFocus: false });
  }
}
