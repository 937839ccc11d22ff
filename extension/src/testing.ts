// testing.ts: seedfall in VS Code's Testing view. Each config is a test
// item; its properties (from the Go sources before any run, then from the
// last sweep) are its children at their lines; each finding is a result
// at its property's line. Three run profiles: Sweep (the default, with
// continuous run on save), Explore (with a wall-time budget), and Replay
// (on a failed item: replays its shortest failing seed and opens the
// timeline at the failure). Results come from the daemon's state after the
// job (testmodel.ts), never from the job's own answer, so the Testing view,
// the Failures and Properties views and the diagnostics show one thing.
import * as vscode from 'vscode';
import * as path from 'path';
import type { ConfigInfo, Failure, PropertiesOfConfig, TimelineEvent } from './lsp_ext';
import { affects, Answer, buildModel, ConfigModel, PropertyModel, shortestFirst, signature, summary, TestMessageModel } from './testmodel';

export type { Answer } from './testmodel';

export interface TestingDeps {
  fetch<T>(method: string, params?: unknown): Promise<T>;
  /** Executes a daemon command quietly (no notifications); its answer. */
  command(command: string, args: Record<string, unknown>): Promise<Answer | undefined>;
  /** Refreshes the custom trees after a job. */
  refreshTrees(): Promise<void>;
  openTimeline(title: string, events: TimelineEvent[], focus?: 'failure', target?: { config: string; seed?: number; faults?: string }): void;
  settings: { seeds(): string; exploreBudget(): string; continuousSeeds(): string };
  output: vscode.LogOutputChannel;
}

/** The tag of items that failed: the Replay profile applies to them only. */
const FAILED_TAG_ID = 'seedfall.failed';
/** Context value of a failure's message: its Replay and Shrink actions. */
export const FAILURE_MESSAGE = 'seedfall.failure';
/** Bound on the continuous runs queued behind a running one (saves coalesce). */
const CONTINUOUS_PENDING_MAX = 1;

const crlf = (s: string) => s.replace(/\r?\n/g, '\r\n');

function location(source?: { file: string; line: number } | null): vscode.Location | undefined {
  if (!source) return undefined;
  return new vscode.Location(vscode.Uri.file(source.file), new vscode.Position(Math.max(source.line - 1, 0), 0));
}

function message(m: TestMessageModel): vscode.TestMessage {
  const t = new vscode.TestMessage(m.text);
  t.location = location(m.source);
  if (m.failure) t.contextValue = FAILURE_MESSAGE;
  return t;
}

export class Testing implements vscode.Disposable {
  readonly controller: vscode.TestController;
  readonly profiles: { sweep: vscode.TestRunProfile; explore: vscode.TestRunProfile; replay: vscode.TestRunProfile };
  private model: ConfigModel[] = [];
  private shown = '';
  /** Jobs of this view in flight: the daemon's notice of their files must
   *  not become a run of its own beside theirs. */
  private jobs = 0;
  /** Counts job starts and ends, so a read that straddles one is dropped. */
  private epoch = 0;
  private disposables: vscode.Disposable[] = [];
  private readonly failedTag = new vscode.TestTag(FAILED_TAG_ID);

  constructor(private d: TestingDeps) {
    this.controller = vscode.tests.createTestController('seedfall', 'Seedfall');
    this.controller.refreshHandler = async () => {
      await this.d.refreshTrees();
      await this.reload();
    };
    this.profiles = {
      sweep: this.controller.createRunProfile('Sweep', vscode.TestRunProfileKind.Run, (r, t) => this.sweep(r, t), true, undefined, true),
      explore: this.controller.createRunProfile('Explore', vscode.TestRunProfileKind.Run, (r, t) => this.explore(r, t), false),
      replay: this.controller.createRunProfile('Replay', vscode.TestRunProfileKind.Debug, (r, t) => this.replay(r, t), true, this.failedTag),
    };
    this.disposables.push(this.controller);
  }

  dispose(): void {
    this.disposables.forEach((x) => x.dispose());
  }

  /** Reads the daemon's state again and shows it; when it changed since the
   *  last run shown (a sweep from a terminal, a failure folder removed), as
   *  a run of its own, so the view never shows stale results. */
  async reload(): Promise<void> {
    if (!(await this.load()) || this.jobs > 0) return;
    const now = signature(this.model);
    const anything = this.model.some((c) => c.lastRun || c.properties.some((p) => p.outcome !== 'unknown'));
    if (now !== this.shown && anything) {
      const run = this.controller.createTestRun(new vscode.TestRunRequest(), 'Seedfall: results on disk', false);
      // A config that does not parse shows its error on its item; typing
      // one makes no run.
      for (const c of this.model) if (!c.error) this.report(run, c);
      run.end();
    }
    this.shown = now;
  }

  /** The model and the items from the daemon's state, reporting nothing.
   *  False when a job of this view started or ended while it read: what it
   *  read may be older than what that job's run has reported. */
  private async load(force = false): Promise<boolean> {
    const epoch = this.epoch;
    const [configs, properties, failures] = await Promise.all([
      this.d.fetch<ConfigInfo[]>('seedfall/configs'),
      this.d.fetch<PropertiesOfConfig[]>('seedfall/properties'),
      this.d.fetch<Failure[]>('seedfall/failures'),
    ]);
    if (epoch !== this.epoch && !force) return false;
    this.model = buildModel(configs, properties, failures);
    this.sync();
    return true;
  }

  /** The shortest failing run of a test item (a property, or a config's
   *  shortest over its properties): what a message's Replay and Shrink act on. */
  failureOf(item: vscode.TestItem | undefined): Failure | undefined {
    if (!item) return undefined;
    const c = this.model.find((m) => m.id === (item.parent?.id ?? item.id));
    const props = item.parent ? c?.properties.filter((p) => p.id === item.id) : c?.properties;
    return (props ?? []).flatMap((p) => p.failures).sort(shortestFirst)[0];
  }

  /** Test items for the model: one per config, one per property. */
  private sync(): void {
    const items: vscode.TestItem[] = [];
    for (const c of this.model) {
      const uri = vscode.Uri.file(c.config);
      const item = this.controller.items.get(c.id) ?? this.controller.createTestItem(c.id, c.name ?? path.basename(path.dirname(c.config)), uri);
      item.description = vscode.workspace.asRelativePath(uri, true);
      item.error = c.error ? new vscode.MarkdownString().appendText(c.error) : undefined;
      item.tags = c.properties.some((p) => p.failures.length) ? [this.failedTag] : [];
      const children = c.properties.map((p) => this.propertyItem(item, p));
      item.children.replace(children);
      items.push(item);
    }
    this.controller.items.replace(items);
  }

  private propertyItem(parent: vscode.TestItem, p: PropertyModel): vscode.TestItem {
    const uri = p.source ? vscode.Uri.file(p.source.file) : undefined;
    const existing = parent.children.get(p.id);
    // An item's uri cannot change: a property that moved file is a new item.
    const item = existing && existing.uri?.toString() === uri?.toString() ? existing : this.controller.createTestItem(p.id, p.message, uri);
    item.range = p.source ? new vscode.Range(p.source.line - 1, 0, p.source.line - 1, 0) : undefined;
    item.description = `${p.node ? p.node + ' · ' : ''}${p.description}`;
    item.tags = p.failures.length ? [this.failedTag] : [];
    return item;
  }

  /** Reports every property of a config on `run` from the model. */
  private report(run: vscode.TestRun, c: ConfigModel, durationMs?: number): void {
    const item = this.controller.items.get(c.id);
    if (!item) return;
    if (c.error) {
      run.errored(item, new vscode.TestMessage(c.error), durationMs);
      return;
    }
    for (const p of c.properties) {
      const child = item.children.get(p.id);
      if (!child) continue;
      switch (p.outcome) {
        case 'failed': run.failed(child, p.messages.map(message)); break;
        case 'skipped': run.skipped(child); break;
        case 'passed': run.passed(child); break;
        default: break;
      }
    }
    if (!c.lastRun) return;
    const failed = c.properties.filter((p) => p.outcome === 'failed');
    if (failed.length) run.failed(item, failed.flatMap((p) => p.messages.map(message)), durationMs);
    else run.passed(item, durationMs);
  }

  /** The configs a request names (a property stands for its config). */
  private configsOf(request: vscode.TestRunRequest): ConfigModel[] {
    const ids = new Set<string>();
    for (const i of request.include ?? this.items()) ids.add(i.parent?.id ?? i.id);
    for (const e of request.exclude ?? []) if (!e.parent) ids.delete(e.id);
    return this.model.filter((c) => ids.has(c.id));
  }

  /** The config items (the controller's collection is not an array). */
  private items(): vscode.TestItem[] {
    const all: vscode.TestItem[] = [];
    this.controller.items.forEach((i) => void all.push(i));
    return all;
  }

  private started(run: vscode.TestRun, c: ConfigModel): void {
    const item = this.controller.items.get(c.id);
    if (!item) return;
    run.started(item);
    item.children.forEach((child) => run.started(child));
  }

  /** Runs one daemon job per config in the request, then reports each from
   *  the daemon's state. Cancelling stops the daemon's job. */
  private async each(request: vscode.TestRunRequest, token: vscode.CancellationToken, name: string, job: (c: ConfigModel) => [string, Record<string, unknown>]): Promise<void> {
    const run = this.controller.createTestRun(request, name);
    const configs = this.configsOf(request);
    for (const c of configs) {
      const item = this.controller.items.get(c.id);
      if (item) run.enqueued(item);
    }
    for (const c of configs) {
      if (token.isCancellationRequested) break;
      if (c.error) {
        this.report(run, c);
        continue;
      }
      this.started(run, c);
      const [command, args] = job(c);
      const stop = token.onCancellationRequested(() => void this.d.command('seedfall.stop', { config: c.config }));
      const t0 = Date.now();
      this.jobs += 1;
      this.epoch += 1;
      try {
        const answer = await this.d.command(command, args);
        if (answer?.cancelled) {
          run.appendOutput(crlf(`${path.basename(c.config)}: cancelled\n`));
          const item = this.controller.items.get(c.id);
          item?.children.forEach((child) => run.skipped(child));
          if (item) run.skipped(item);
          continue;
        }
        run.appendOutput(crlf(`${path.basename(c.config)}: ${summary(command, answer)}\n`));
        await this.d.refreshTrees();
        await this.load(true);
        // This run reports what the job left, and the view counts it as
        // shown before the job counts as ended: the daemon's notice of the
        // same files then finds nothing new to report again.
        this.shown = signature(this.model);
        const fresh = this.model.find((m) => m.id === c.id);
        if (fresh) this.report(run, fresh, Date.now() - t0);
      } catch (e) {
        const item = this.controller.items.get(c.id);
        if (item) run.errored(item, new vscode.TestMessage(e instanceof Error ? e.message : String(e)));
      } finally {
        stop.dispose();
        this.jobs -= 1;
        this.epoch += 1;
      }
    }
    run.end();
  }

  private async sweep(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    if (request.continuous) return this.continuous(request, token);
    await this.each(request, token, 'Seedfall sweep', (c) => ['seedfall.run', { config: c.config, seeds: this.d.settings.seeds() }]);
  }

  private async explore(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    await this.each(request, token, 'Seedfall explore', (c) => ['seedfall.explore', { config: c.config, budget: this.d.settings.exploreBudget() }]);
  }

  /** Replays the shortest failing seed of each failed item in the request
   *  and opens the timeline at its failure. */
  private async replay(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    const run = this.controller.createTestRun(request, 'Seedfall replay');
    const targets = new Map<string, { item: vscode.TestItem; failure: Failure }>();
    for (const i of request.include ?? this.items()) {
      const f = this.failureOf(i);
      if (f) targets.set(`${f.config}\u0000${f.seed}`, { item: i, failure: f });
    }
    for (const { item, failure: f } of targets.values()) {
      if (token.isCancellationRequested) break;
      run.started(item);
      const t0 = Date.now();
      const stop = token.onCancellationRequested(() => void this.d.command('seedfall.stop', { config: f.config }));
      try {
        const replayed = await this.d.command('seedfall.replay', { config: f.config, seed: f.seed, faults: f.faults });
        if (replayed?.cancelled) continue;
        run.appendOutput(crlf(replayed?.text ?? ''), undefined, item);
        const text = `${f.node}: ${f.message}${f.details ? ' ' + f.details : ''}\nseed ${f.seed}: the replay ${replayed?.exit === 1 ? 'fails again' : 'passes now'}`;
        const m = new vscode.TestMessage(text);
        m.location = location(f.source);
        m.contextValue = FAILURE_MESSAGE;
        if (replayed?.exit === 1) run.failed(item, m, Date.now() - t0);
        else run.passed(item, Date.now() - t0);
        const inspected = await this.d.command('seedfall.inspect', { config: f.config, seed: f.seed, faults: f.faults });
        const events = (Array.isArray(inspected?.result) ? inspected.result : []) as TimelineEvent[];
        this.d.openTimeline(`seed ${f.seed} (${path.basename(f.config)})`, events, 'failure', { config: f.config, seed: f.seed, faults: f.faults });
      } catch (e) {
        run.errored(item, new vscode.TestMessage(e instanceof Error ? e.message : String(e)));
      } finally {
        stop.dispose();
      }
    }
    run.end();
  }

  /** Continuous run: a sweep of `seedfall.testing.continuousSeeds` of each
   *  config in the request whenever one of its configs or guest sources is
   *  saved, until the run is cancelled. Saves during a sweep coalesce. */
  private async continuous(request: vscode.TestRunRequest, token: vscode.CancellationToken): Promise<void> {
    let running = false;
    let pending = 0;
    const wanted = () => this.configsOf(request);
    const go = async (configs: ConfigModel[]): Promise<void> => {
      if (running) {
        pending = Math.min(pending + 1, CONTINUOUS_PENDING_MAX);
        return;
      }
      running = true;
      try {
        const ids = new Set(configs.map((c) => c.id));
        const include = this.items().filter((i) => ids.has(i.id));
        await this.each(new vscode.TestRunRequest(include, undefined, request.profile), token, 'Seedfall continuous sweep', (c) => ['seedfall.run', { config: c.config, seeds: this.d.settings.continuousSeeds() }]);
      } finally {
        running = false;
      }
      if (pending > 0 && !token.isCancellationRequested) {
        pending = 0;
        await go(wanted());
      }
    };
    const watch = vscode.workspace.onDidSaveTextDocument((doc) => {
      const hit = wanted().filter((c) => affects(c.config, doc.uri.fsPath));
      if (hit.length) void go(hit);
    });
    this.d.output.info('continuous run: a sweep on every save of a config or a guest source');
    await new Promise<void>((resolve) => token.onCancellationRequested(() => resolve()));
    watch.dispose();
  }
}
