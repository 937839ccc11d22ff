// ctx.ts: the single owner of the extension's state: the client and its
// lifecycle, the output channel, the status bar, the trees, and what must be
// disposed with the extension or with the client.
import * as vscode from 'vscode';
import { LanguageClient, ExecuteCommandRequest } from 'vscode-languageclient/node';
import { createClient } from './client';
import { findServer } from './bootstrap';
import { createCommands, Deps } from './commands';
import * as config from './config';
import { notifications, requests, ConfigInfo, Failure, Status, TimelineEvent } from './lsp_ext';
import { OutputDocuments, Presenter, runCommand } from './results';
import { StatusBar } from './status';
import { openTimeline } from './timeline';
import { MomentDeps, MomentTarget, openMoment } from './moment';
import { CorpusTree, FailuresTree, PropertiesTree, RoundsTree } from './trees';
import { Answer, Testing } from './testing';

/** Context key the Failures view's welcome text depends on. */
export const HAS_CONFIGS = 'seedfall.hasConfigs';

export class Ctx {
  client: LanguageClient | undefined;
  readonly output: vscode.LogOutputChannel;
  readonly status: StatusBar;
  readonly trees: { failures: FailuresTree; corpus: CorpusTree; rounds: RoundsTree; properties: PropertiesTree };
  readonly documents = new OutputDocuments();
  readonly testing: Testing;
  private clientDisposables: vscode.Disposable[] = [];

  constructor(readonly extension: vscode.ExtensionContext) {
    this.output = vscode.window.createOutputChannel('Seedfall', { log: true });
    this.status = new StatusBar();
    const fetch = <T>(method: string) => this.request<T>(method, {});
    this.trees = { failures: new FailuresTree(fetch), corpus: new CorpusTree(fetch), rounds: new RoundsTree(fetch), properties: new PropertiesTree(fetch) };
    extension.subscriptions.push(
      this.output,
      this.status.item,
      vscode.workspace.registerTextDocumentContentProvider(OutputDocuments.scheme, this.documents),
      vscode.window.registerTreeDataProvider('seedfall.failures', this.trees.failures),
      vscode.window.registerTreeDataProvider('seedfall.corpus', this.trees.corpus),
      vscode.window.registerTreeDataProvider('seedfall.rounds', this.trees.rounds),
      vscode.window.registerTreeDataProvider('seedfall.properties', this.trees.properties),
    );
    this.testing = new Testing({
      fetch: (method, params) => this.request(method, params ?? {}),
      command: (command, args) => this.request<Answer | undefined>(ExecuteCommandRequest.method, { command, arguments: [args] }),
      refreshTrees: () => this.refreshViews(),
      openTimeline: (title, events, focus, target) => void this.timeline(title, events, focus, target),
      settings: { seeds: config.sweepSeeds, exploreBudget: config.exploreBudget, continuousSeeds: config.continuousSeeds },
      output: this.output,
    });
    extension.subscriptions.push(this.testing);
    const commands = createCommands(this.deps());
    for (const [id, handler] of Object.entries(commands)) {
      extension.subscriptions.push(vscode.commands.registerCommand(id, handler));
    }
    extension.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => {
      if (config.restartOn.some((s) => e.affectsConfiguration(s))) void this.restart();
    }));
  }

  async request<T>(method: string, params: unknown): Promise<T> {
    if (!this.client) throw new Error('the seedfall daemon is not running');
    return this.client.sendRequest<T>(method, params);
  }

  presenter(): Presenter {
    return {
      output: this.output,
      showDocument: (title, text) => this.documents.show(title, text),
      openTimeline: (title, events, target) => void this.timeline(title, events, undefined, target),
      showFailures: () => void vscode.commands.executeCommand('seedfall.failures.focus'),
    };
  }

  /** Runs a daemon command, shows what it did, refreshes the trees. */
  async run(command: string, args: Record<string, unknown>, send: () => Promise<unknown>): Promise<unknown> {
    const r = await runCommand(command, args, send, this.presenter());
    await this.refreshTrees();
    return r;
  }

  deps(): Deps {
    return {
      execute: (command, args) => this.run(command, args, () => this.request(ExecuteCommandRequest.method, { command, arguments: [args] })),
      fetch: (method, params) => this.request(method, params ?? {}),
      configs: async () => (await this.request<ConfigInfo[]>(requests.configs, {})).map((c) => c.config),
      refresh: () => this.refreshTrees(),
      restart: () => this.restart(),
      settings: { seeds: config.sweepSeeds, rounds: config.exploreRounds },
      failureOfTest: (test) => this.testing.failureOf(test as vscode.TestItem | undefined),
      openMoment: (target, atEvent) => this.moment(target, atEvent),
    };
  }

  async timeline(title: string, events: TimelineEvent[], focus?: 'failure', target?: MomentTarget): Promise<void> {
    const failures = await this.request<Failure[]>('seedfall/failures', {}).catch(() => [] as Failure[]);
    const sources = new Map<string, string>();
    for (const f of failures) if (f.source) sources.set(f.source.file.split('/').slice(-2).join('/'), f.source.file);
    const onMoment = target ? (index: number) => void this.moment(target, index) : undefined;
    openTimeline(this.extension.extensionPath, title, events, sources, focus, onMoment);
  }

  /** The moment view at event `atEvent` of a run. */
  async moment(target: MomentTarget, atEvent: number): Promise<void> {
    await openMoment(this.extension.extensionPath, this.momentDeps(), target, atEvent);
  }

  momentDeps(): MomentDeps {
    return {
      command: (command, args) => this.request<Answer | undefined>(ExecuteCommandRequest.method, { command, arguments: [args] }),
      execute: (command, args) => this.run(command, args, () => this.request(ExecuteCommandRequest.method, { command, arguments: [args] })),
      branchSeeds: config.branchSeeds,
      output: this.output,
    };
  }

  /** The custom views and the Testing view, from the daemon's state. */
  async refreshTrees(): Promise<void> {
    await this.refreshViews();
    await this.testing.reload().catch((e) => this.output.warn(`the Testing view could not be refreshed: ${e}`));
  }

  /** The custom views only. */
  async refreshViews(): Promise<void> {
    const configs = await this.request<ConfigInfo[]>(requests.configs, {}).catch(() => [] as ConfigInfo[]);
    await vscode.commands.executeCommand('setContext', HAS_CONFIGS, configs.length > 0);
    await Promise.all(Object.values(this.trees).map((t) => t.refresh()));
  }

  async start(): Promise<void> {
    const bin = findServer(this.extension.extensionPath);
    this.output.info(`starting ${bin} lsp`);
    const client = createClient(bin, this.output, (command, args, send) => this.run(command, args, send));
    this.client = client;
    this.clientDisposables.push(
      client.onNotification(notifications.status, (s: Status) => this.status.update(s)),
      client.onNotification(notifications.roundFinished, () => void this.trees.rounds.refresh()),
      client.onNotification(notifications.failureFound, () => void this.trees.failures.refresh()),
      client.onNotification(notifications.changed, () => void this.refreshTrees()),
    );
    await client.start();
    this.output.info(`the daemon is running (${client.initializeResult?.serverInfo?.name} ${client.initializeResult?.serverInfo?.version})`);
    await this.refreshTrees();
  }

  async restart(): Promise<void> {
    await this.stop();
    try {
      await this.start();
    } catch (e) {
      this.status.stopped(String(e));
      void vscode.window.showErrorMessage(`Seedfall: ${e}`);
    }
  }

  async stop(): Promise<void> {
    this.clientDisposables.forEach((d) => d.dispose());
    this.clientDisposables = [];
    const c = this.client;
    this.client = undefined;
    if (c) await c.stop().catch(() => undefined);
  }
}
