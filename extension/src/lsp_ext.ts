// lsp_ext.ts mirrors the daemon's own messages (server/lsp/src/protocol.rs,
// documented in docs/lsp.md) one to one.
export const requests = {
  configs: 'seedfall/configs',
  failures: 'seedfall/failures',
  corpus: 'seedfall/corpus',
  rounds: 'seedfall/rounds',
  properties: 'seedfall/properties',
  timeline: 'seedfall/timeline',
} as const;

export const notifications = {
  roundFinished: 'seedfall/roundFinished',
  failureFound: 'seedfall/failureFound',
  status: 'seedfall/status',
  changed: 'seedfall/changed',
} as const;

/** Commands the daemon executes; the language client registers them itself. */
export const serverCommands = ['seedfall.run', 'seedfall.explore', 'seedfall.stop', 'seedfall.replay', 'seedfall.shrink', 'seedfall.inspect', 'seedfall.cause', 'seedfall.pin'] as const;

export interface Source { file: string; line: number }
export interface ConfigInfo { config: string; name: string | null; error: string | null }
export interface Failure {
  config: string; seed: number; node: string; kind: string; message: string; details?: string | null;
  time_ns: number; folder: string; faults: string; source?: Source | null;
  /** Seeds of the last sweep that failed with this finding (its folders keep only some). */
  finding_seeds?: number | null;
}
export interface Round {
  round: number; runs: number; new_signals: string[]; signals: number; new_functions: number; functions: number;
  corpus: number; failures: number; elapsed_ms: number;
  /** Per operator that made children (fresh, branch, rekey, faults): its share in millionths and what its children yielded. */
  operators?: OperatorRound[];
}
export interface OperatorRound { operator: string; share_ppm: number; children: number; new_signals: number; failures: number; worth: number }
export interface RoundsOfConfig { config: string; rounds: Round[] }
export interface CorpusOfConfig { config: string; entries: { id: string; seed: number; reached: { signal: Record<string, unknown>; at_ns?: number }[] }[]; stale: string[] }
export interface Property { message: string; kind: string; runs_hit: number; runs_true: number; runs_false: number; source?: Source | null }
export interface CatalogProperty { node: string; kind: string; message: string; source: Source }
export interface PropertiesOfConfig {
  config: string; last_run: { seeds: string; runs: number; failed: number; properties: Property[] } | null;
  /** The properties in the Go nodes' own sources, known before any run. */
  catalog?: CatalogProperty[];
}
export interface Status { message: string; running: { token: string; title: string; config?: string }[] }
export interface TimelineEvent { step: number; time_ns: number; node?: string | null; event: string; [k: string]: unknown }
