// testmodel.ts: what the Testing view shows, derived from the daemon's
// state alone (seedfall/configs, seedfall/properties, seedfall/failures),
// the same state the Failures and Properties views and the diagnostics are
// drawn from, so the four never disagree. No VS Code API here: testing.ts
// turns this model into test items and results.
import type { ConfigInfo, Failure, PropertiesOfConfig, Property, Source } from './lsp_ext';
import * as path from 'path';
import { propertyIcon } from './trees';

/** A property's outcome in the last sweep, as the Testing view reports it. */
export type Outcome = 'passed' | 'failed' | 'skipped' | 'unknown';

export interface TestMessageModel {
  text: string;
  /** Where the message belongs: the property's (or the failure's) line. */
  source?: Source | null;
  /** The run it comes from, for the Replay and Shrink actions on it. */
  failure?: Failure;
}

export interface PropertyModel {
  /** Stable across refreshes: config, kind and message. */
  id: string;
  message: string;
  kind: string;
  node?: string;
  source?: Source | null;
  outcome: Outcome;
  messages: TestMessageModel[];
  /** Failing runs, shortest first (the one Replay replays). */
  failures: Failure[];
  /** "hit 9/11, true 9" from the last sweep. */
  description: string;
}

export interface ConfigModel {
  id: string;
  config: string;
  name: string | null;
  /** The config does not parse: no children, and this error. */
  error: string | null;
  properties: PropertyModel[];
  /** The last sweep's seeds and runs, when there was one. */
  lastRun: { seeds: string; runs: number; failed: number } | null;
}

/** A daemon command's answer (server/lsp/src/commands.rs). */
export type Answer = { exit?: number; text?: string; cancelled?: boolean; result?: unknown };

// VS Code reserves \0 in test ids (its own separator): a JSON triple instead.
export const propertyId = (config: string, kind: string, message: string): string => JSON.stringify([config, kind, message]);

/** Shortest failing run first, as the diagnostics pick it. */
export const shortestFirst = (a: Failure, b: Failure): number => a.time_ns - b.time_ns || a.seed - b.seed;

function sameSource(a?: Source | null, b?: Source | null): boolean {
  return !!a && !!b && a.line === b.line && (a.file === b.file || a.file.endsWith('/' + b.file) || b.file.endsWith('/' + a.file));
}

/** The failure block a failed property shows at its line. */
export function failureText(fs: Failure[]): string {
  const f = fs[0];
  const details = f.details ? ` ${f.details}` : '';
  // As the diagnostic counts them: every seed of the last sweep that failed
  // this way, though only some keep a folder.
  const seeds = Math.max(fs.length, ...fs.map((x) => x.finding_seeds ?? 0));
  const shown = fs.slice(1, 6).map((x) => x.seed);
  const listed = shown.length ? `: ${shown.join(', ')}${seeds - 1 > shown.length ? ', ...' : ''}` : '';
  const more = seeds > 1 ? ` (and ${seeds - 1} more failing seed${seeds === 2 ? '' : 's'}${listed})` : '';
  const ms = (f.time_ns / 1e6).toFixed(3);
  return [
    `${f.node}: ${f.message}${details}`,
    `seed ${f.seed} at ${ms}ms${more}`,
    `replay: seedfall replay -c ${f.config} -seed ${f.seed}`,
    `shrink: seedfall shrink -c ${f.config} -seed ${f.seed}`,
  ].join('\n');
}

function describe(p: Property | undefined, runs: number): string {
  if (!p) return 'not run yet';
  if (p.runs_hit === 0) return `${p.kind}: never reached in ${runs} runs`;
  return `${p.kind}: hit ${p.runs_hit}/${runs}, true ${p.runs_true}${p.runs_false ? `, false ${p.runs_false}` : ''}`;
}

/** The outcome of a property from the last sweep's counts, failures aside. */
function outcomeOf(p: Property | undefined): Outcome {
  if (!p) return 'unknown';
  switch (propertyIcon(p)) {
    case 'error': return 'failed';
    // Never reached, or a Sometimes never true: the Properties view's and
    // the diagnostics' warning. The Testing view has no warning state; it
    // did not run to a verdict, so it is skipped, with the reason.
    case 'warning': return 'skipped';
    default: return 'passed';
  }
}

/** The model of every config, from the daemon's answers. */
export function buildModel(configs: ConfigInfo[], properties: PropertiesOfConfig[], failures: Failure[]): ConfigModel[] {
  const props = new Map(properties.map((p) => [p.config, p]));
  return configs.map((c) => {
    const pc = props.get(c.config);
    const last = pc?.last_run ?? null;
    const runs = last?.runs ?? 0;
    const own = failures.filter((f) => f.config === c.config).sort(shortestFirst);
    const byKey = new Map<string, PropertyModel>();
    const add = (kind: string, message: string, source?: Source | null, node?: string): PropertyModel => {
      const id = propertyId(c.config, kind, message);
      let m = byKey.get(id);
      if (!m) {
        m = { id, message, kind, node, source, outcome: 'unknown', messages: [], failures: [], description: 'not run yet' };
        byKey.set(id, m);
      }
      m.source ??= source;
      m.node ??= node;
      return m;
    };
    // The sources' properties first (before any run), then the last sweep's.
    for (const e of pc?.catalog ?? []) add(e.kind, e.message, e.source, e.node);
    for (const p of last?.properties ?? []) {
      const m = add(p.kind, p.message, p.source);
      m.outcome = outcomeOf(p);
      m.description = describe(p, runs);
      if (m.outcome === 'failed') m.messages.push({ text: `${p.kind} "${p.message}": ${m.description}`, source: m.source });
      if (m.outcome === 'skipped') m.messages.push({ text: `${p.message}: ${m.description}`, source: m.source });
    }
    // Every failure lands on its property (same message, and line when both
    // are known), else on an item of its own: a panic, an exit, a watchdog.
    const models = [...byKey.values()];
    for (const f of own) {
      let m = f.kind === 'property' ? models.find((x) => x.message === f.message && (!f.source || !x.source || sameSource(x.source, f.source))) : undefined;
      if (!m) {
        // A panic, an exit or a watchdog has no property: it is named by its node and message.
        m = f.kind === 'property' ? add('property', f.message, f.source, f.node) : add(f.kind, `${f.node}: ${f.message}`, f.source, f.node);
        if (!models.includes(m)) models.push(m);
        m.description = f.kind;
      }
      m.failures.push(f);
    }
    for (const m of models) {
      if (!m.failures.length) continue;
      m.outcome = 'failed';
      m.messages = [{ text: failureText(m.failures), source: m.failures[0].source ?? m.source, failure: m.failures[0] }];
    }
    models.sort((a, b) => (a.source?.file ?? '').localeCompare(b.source?.file ?? '') || (a.source?.line ?? 0) - (b.source?.line ?? 0) || a.message.localeCompare(b.message));
    return {
      id: c.config,
      config: c.config,
      name: c.name,
      error: c.error,
      properties: c.error ? [] : models,
      lastRun: last ? { seeds: last.seeds, runs: last.runs, failed: last.failed } : null,
    };
  });
}

/** One line per config that says what the model holds, for change detection. */
export function signature(model: ConfigModel[]): string {
  return JSON.stringify(model.map((c) => [c.id, c.error, c.lastRun, c.properties.map((p) => [p.id, p.outcome, p.failures.map((f) => f.seed)])]));
}

/** Whether saving `file` should rerun `config`: the config itself, or a Go
 *  or Rust source (or go.mod, Cargo.toml) under the config's folder. */
export function affects(config: string, file: string): boolean {
  if (file === config) return true;
  const dir = path.dirname(config) + path.sep;
  if (!file.startsWith(dir) || file.includes(`${path.sep}.seedfall${path.sep}`)) return false;
  return /\.(go|rs)$/.test(file) || ['go.mod', 'go.sum', 'Cargo.toml', 'Cargo.lock'].includes(path.basename(file));
}

/** One line on what a job did, for the run's output. */
export function summary(command: string, a: Answer | undefined): string {
  const r = (a?.result ?? {}) as { runs?: number; failed?: number; rounds?: unknown[]; failures?: unknown[] };
  if (command === 'seedfall.explore') return `explored ${r.rounds?.length ?? 0} rounds, ${r.failures?.length ?? 0} failures`;
  return `${r.runs ?? 0} runs, ${r.failed ?? 0} failed`;
}
