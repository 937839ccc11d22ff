// Trees: what each view shows for the daemon's answers.
import { describe, it, expect } from 'vitest';
import * as vscode from 'vscode';
import { FailuresTree, CorpusTree, RoundsTree, PropertiesTree, describeSignal } from '../src/trees';

const failures = [
  { config: '/ws/kv/seedfall.json', seed: 6, node: 'client#1', kind: 'property', message: 'the vault opened', details: '{"levels":6}', time_ns: 923003008,
    folder: '/ws/kv/.seedfall/failures/x', faults: '/ws/kv/.seedfall/failures/x/faults.json', source: { file: '/ws/kv/main.go', line: 37 } },
];

const fetchWith = (answers: Record<string, unknown>) => async <T>(m: string): Promise<T> => answers[m] as T;

describe('trees', () => {
  it('failures: seed, node and message; inline actions; click opens the source line', async () => {
    const t = new FailuresTree(fetchWith({ 'seedfall/failures': failures }));
    await t.refresh();
    const [item] = t.getChildren();
    expect(item.label).toBe('seed 6  client#1: the vault opened');
    expect(item.contextValue).toBe('failure');
    expect(item.command?.command).toBe('vscode.open');
    const [uri, opts] = item.command?.arguments as [vscode.Uri, { selection: vscode.Range }];
    expect(uri.fsPath).toBe('/ws/kv/main.go');
    expect(opts.selection.start.line).toBe(36);
  });

  it('corpus: entries grouped by config with their signals', async () => {
    const corpus = [{ config: '/ws/kv/seedfall.json', stale: ['x'], entries: [{ id: 'abc', seed: 3, reached: [{ signal: { signal: 'property', message: 'level 2 reached', cond: true, during: ['crash'] }, at_ns: 5 }] }] }];
    const t = new CorpusTree(fetchWith({ 'seedfall/corpus': corpus }));
    await t.refresh();
    const [group] = t.getChildren();
    expect(group.label).toBe('seedfall.json');
    expect(group.description).toBe('1 entry, 1 stale');
    const [entry] = t.getChildren(group);
    expect(entry.label).toBe('seed 3 (abc)');
    expect(t.getChildren(entry)[0].label).toBe('property "level 2 reached" = true during crash');
  });

  it('rounds: one row per round with the growth figures', async () => {
    const rounds = [{ config: 'c', rounds: [{ round: 4, runs: 32, new_signals: ['property "level 6 reached" = true'], signals: 6, new_functions: 2, functions: 627, corpus: 5, failures: 1, elapsed_ms: 1628 }] }];
    const t = new RoundsTree(fetchWith({ 'seedfall/rounds': rounds }));
    await t.refresh();
    const [r] = t.getChildren();
    expect(r.label).toBe('round 4');
    expect(r.description).toBe('runs 32  +1 signals (6)  +2 functions (627)  corpus 5  failures 1');
  });

  it('rounds: what each operator\'s children yielded, before the new signals', async () => {
    const operators = [
      { operator: 'fresh', share_ppm: 100000, children: 1, new_signals: 0, failures: 0, worth: 0 },
      { operator: 'branch', share_ppm: 850000, children: 6, new_signals: 3, failures: 1, worth: 21000 },
      { operator: 'rekey', share_ppm: 50000, children: 0, new_signals: 0, failures: 0, worth: 0 },
    ];
    const rounds = [{ config: 'c', rounds: [{ round: 4, runs: 32, new_signals: ['property "level 6 reached" = true'], signals: 6, new_functions: 2, functions: 627, corpus: 5, failures: 1, elapsed_ms: 1628, operators }] }];
    const t = new RoundsTree(fetchWith({ 'seedfall/rounds': rounds }));
    await t.refresh();
    const [r] = t.getChildren();
    expect(r.children.map((c) => [c.label, c.description])).toEqual([
      ['fresh: 1 child', 'share 10%'],
      ['branch: 6 children, +3 new, 1 failed', 'share 85%'],
      ['new: property "level 6 reached" = true', undefined],
    ]);
  });

  it('properties: hits and truth counts; never reached marked', async () => {
    const props = [{ config: 'c', last_run: { seeds: '1-500', runs: 500, failed: 0, properties: [
      { message: 'balance never negative', kind: 'always', runs_hit: 431, runs_true: 431, runs_false: 0, source: { file: '/ws/a.go', line: 9 } },
      { message: 'level 6 reached', kind: 'sometimes', runs_hit: 0, runs_true: 0, runs_false: 0 },
    ] } }];
    const t = new PropertiesTree(fetchWith({ 'seedfall/properties': props }));
    await t.refresh();
    const [a, b] = t.getChildren();
    expect(a.description).toBe('always: hit 431/500, true 431');
    expect(a.command?.command).toBe('vscode.open');
    expect(b.description).toBe('sometimes: never reached');
  });

  it('a daemon that is down gives empty trees, not errors', async () => {
    const t = new FailuresTree(async () => { throw new Error('down'); });
    await t.refresh();
    expect(t.getChildren()).toEqual([]);
  });

  it('describes fault and function signals', () => {
    expect(describeSignal({ signal: 'fault', kind: 'buggify', node: 'kv', site: 'slow' })).toBe('fault buggify kv "slow"');
    expect(describeSignal({ signal: 'function', node: 'kv', index: 12 })).toBe('function kv#12');
  });
});

describe('property icons', () => {
  const p = (kind: string, runs_hit: number, runs_true: number, runs_false: number) => ({ message: 'm', kind, runs_hit, runs_true, runs_false });
  it('a false always or a reached unreachable is an error; unmet is a warning', async () => {
    const { propertyIcon } = await import('../src/trees');
    expect(propertyIcon(p('always', 40, 23, 17))).toBe('error');
    expect(propertyIcon(p('always_or_unreachable', 3, 2, 1))).toBe('error');
    expect(propertyIcon(p('unreachable', 1, 0, 1))).toBe('error');
    expect(propertyIcon(p('always', 0, 0, 0))).toBe('warning');
    expect(propertyIcon(p('sometimes', 5, 0, 5))).toBe('warning');
    expect(propertyIcon(p('unreachable', 0, 0, 0))).toBe('pass');
    expect(propertyIcon(p('always_or_unreachable', 0, 0, 0))).toBe('pass');
    expect(propertyIcon(p('reachable', 4, 4, 0))).toBe('pass');
  });
});

describe('empty views', () => {
  it('a config without corpus entries leaves the Corpus view empty (its welcome text shows)', async () => {
    const t = new CorpusTree(fetchWith({ 'seedfall/corpus': [{ config: '/ws/kv/seedfall.json', stale: [], entries: [] }] }));
    await t.refresh();
    expect(t.getChildren()).toEqual([]);
  });
});
