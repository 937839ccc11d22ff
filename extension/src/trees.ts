// trees.ts: the Failures, Corpus, Rounds and Properties views, fed by the
// daemon's seedfall/* requests and refreshed on its notifications.
import * as vscode from 'vscode';
import * as path from 'path';
import type { Failure, CorpusOfConfig, RoundsOfConfig, PropertiesOfConfig, Property, OperatorRound } from './lsp_ext';

export type Fetch = <T>(method: string) => Promise<T>;

export class Item extends vscode.TreeItem {
  children: Item[] = [];
  constructor(label: string, collapsible = vscode.TreeItemCollapsibleState.None) {
    super(label, collapsible);
  }
}

const openAt = (file: string, line: number): vscode.Command => ({
  title: 'Open',
  command: 'vscode.open',
  arguments: [vscode.Uri.file(file), { selection: new vscode.Range(Math.max(line - 1, 0), 0, Math.max(line - 1, 0), 0) }],
});

abstract class Tree implements vscode.TreeDataProvider<Item> {
  private changed = new vscode.EventEmitter<Item | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  protected roots: Item[] = [];
  constructor(protected fetch: Fetch) {}
  abstract load(): Promise<Item[]>;
  async refresh(): Promise<void> {
    try {
      this.roots = await this.load();
    } catch {
      this.roots = [];
    }
    this.changed.fire(undefined);
  }
  getTreeItem(i: Item): vscode.TreeItem { return i; }
  getChildren(i?: Item): Item[] { return i ? i.children : this.roots; }
}

export class FailuresTree extends Tree {
  async load(): Promise<Item[]> {
    const failures = await this.fetch<Failure[]>('seedfall/failures');
    return failures.map((f) => {
      const item = new Item(`seed ${f.seed}  ${f.node}: ${f.message}`);
      item.description = path.basename(f.config);
      item.tooltip = `${f.node}: ${f.message}${f.details ? ' ' + f.details : ''}\nseed ${f.seed}, ${f.kind}\n${f.folder}`;
      item.contextValue = 'failure';
      item.iconPath = new vscode.ThemeIcon('error');
      (item as Item & { failure: Failure }).failure = f;
      if (f.source) item.command = openAt(f.source.file, f.source.line);
      return item;
    });
  }
}

export class CorpusTree extends Tree {
  async load(): Promise<Item[]> {
    // A config without entries shows nothing, so the view's welcome text does.
    const all = (await this.fetch<CorpusOfConfig[]>('seedfall/corpus')).filter((c) => c.entries.length || c.stale.length);
    return all.map((c) => {
      const group = new Item(path.basename(c.config), vscode.TreeItemCollapsibleState.Expanded);
      group.description = `${c.entries.length} ${c.entries.length === 1 ? 'entry' : 'entries'}${c.stale.length ? `, ${c.stale.length} stale` : ''}`;
      group.children = c.entries.map((e) => {
        const item = new Item(`seed ${e.seed} (${e.id})`, e.reached.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
        item.children = e.reached.map((r) => new Item(describeSignal(r.signal)));
        return item;
      });
      return group;
    });
  }
}

export function describeSignal(s: Record<string, unknown>): string {
  switch (s.signal) {
    case 'property': {
      const during = (s.during as string[] | undefined)?.length ? ` during ${(s.during as string[]).join(',')}` : '';
      return `property "${s.message}" = ${s.cond}${during}`;
    }
    case 'fault': return `fault ${s.kind} ${s.node}${s.site ? ` "${s.site}"` : ''}`;
    default: return `function ${s.node}#${s.index}`;
  }
}

/** One operator's children in a round: `branch: 5 children, +3 new, 1 failed (share 62%)`. */
export function operatorItem(o: OperatorRound): Item {
  const notes = [`${o.children} ${o.children === 1 ? 'child' : 'children'}`];
  if (o.new_signals > 0) notes.push(`+${o.new_signals} new`);
  if (o.failures > 0) notes.push(`${o.failures} failed`);
  const item = new Item(`${o.operator}: ${notes.join(', ')}`);
  item.description = `share ${Math.round(o.share_ppm / 10_000)}%`;
  return item;
}

export class RoundsTree extends Tree {
  async load(): Promise<Item[]> {
    const all = await this.fetch<RoundsOfConfig[]>('seedfall/rounds');
    return all.flatMap((c) => c.rounds.map((r) => {
      // Round 1 runs the seed range: its operators say nothing a user asked about.
      const ops = r.round > 1 ? (r.operators ?? []).filter((o) => o.children > 0) : [];
      const children = [...ops.map(operatorItem), ...r.new_signals.map((s) => new Item(`new: ${s}`))];
      const item = new Item(`round ${r.round}`, children.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
      item.description = `runs ${r.runs}  +${r.new_signals.length} signals (${r.signals})  +${r.new_functions} functions (${r.functions})  corpus ${r.corpus}  failures ${r.failures}`;
      item.children = children;
      return item;
    }));
  }
}

/** Failed (an always false, an unreachable reached), unmet (never reached, a sometimes never true) or fine. */
export function propertyIcon(p: Property): 'error' | 'warning' | 'pass' {
  if ((p.kind.startsWith('always') && p.runs_false > 0) || (p.kind === 'unreachable' && p.runs_hit > 0)) return 'error';
  if ((p.runs_hit === 0 && p.kind !== 'unreachable' && p.kind !== 'always_or_unreachable') || (p.kind === 'sometimes' && p.runs_true === 0)) return 'warning';
  return 'pass';
}

export class PropertiesTree extends Tree {
  async load(): Promise<Item[]> {
    const all = await this.fetch<PropertiesOfConfig[]>('seedfall/properties');
    return all.flatMap((c) => (c.last_run?.properties ?? []).map((p) => {
      const runs = c.last_run?.runs ?? 0;
      const item = new Item(`${p.message}`);
      item.description = p.runs_hit === 0 ? `${p.kind}: never reached` : `${p.kind}: hit ${p.runs_hit}/${runs}, true ${p.runs_true}${p.runs_false ? `, false ${p.runs_false}` : ''}`;
      item.iconPath = new vscode.ThemeIcon(propertyIcon(p));
      if (p.source) item.command = openAt(p.source.file, p.source.line);
      return item;
    }));
  }
}
