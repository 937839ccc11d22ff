// The Testing view's model from the daemon's answers (shapes as a real
// kvlog sweep of seeds 55-65 gives them: server/lsp/tests/node/testing.test.mjs
// checks the daemon's side on the real guest).
import { describe, it, expect } from 'vitest';
import { affects, buildModel, failureText, signature, summary } from '../src/testmodel';
import type { ConfigInfo, Failure, PropertiesOfConfig } from '../src/lsp_ext';

const config = '/w/kvlog/seedfall.json';
const main = '/w/kvlog/main.go';
const configs: ConfigInfo[] = [{ config, name: null, error: null }];
const catalog = [
  { node: 'kv', kind: 'always', message: 'acknowledged writes survive crashes', source: { file: main, line: 171 } },
  { node: 'kv', kind: 'reachable', message: 'the client finished its writes', source: { file: main, line: 191 } },
];
const failure = (seed: number, time_ns: number, extra: Partial<Failure> = {}): Failure => ({
  config, seed, node: 'kv', kind: 'property', message: 'acknowledged writes survive crashes', details: '{"acknowledged":8,"found":0}',
  time_ns, folder: `/w/kvlog/.seedfall/failures/kvlog-seed-${seed}-property-2534b032a470`, faults: `/w/kvlog/.seedfall/failures/kvlog-seed-${seed}-property-2534b032a470/faults.json`,
  source: { file: main, line: 171 }, ...extra,
});
const lastRun = {
  seeds: '55-65', runs: 11, failed: 2,
  properties: [
    { message: 'acknowledged writes survive crashes', kind: 'always', runs_hit: 2, runs_true: 0, runs_false: 2, source: { file: main, line: 171 } },
    { message: 'the client finished its writes', kind: 'reachable', runs_hit: 9, runs_true: 9, runs_false: 0, source: { file: main, line: 191 } },
  ],
};

describe('the Testing view model', () => {
  it('lists the sources\' properties before any run, with no verdict', () => {
    const [c] = buildModel(configs, [{ config, last_run: null, catalog }], []);
    expect(c.properties.map((p) => [p.message, p.kind, p.source?.line, p.outcome, p.description])).toEqual([
      ['acknowledged writes survive crashes', 'always', 171, 'unknown', 'not run yet'],
      ['the client finished its writes', 'reachable', 191, 'unknown', 'not run yet'],
    ]);
    expect(c.lastRun).toBeNull();
  });

  it('puts each failure on its property, shortest run first, with the failure block and the commands', () => {
    const [c] = buildModel(configs, [{ config, last_run: lastRun, catalog }], [failure(63, 95_579_794), failure(62, 57_264_892)]);
    const [always, reachable] = c.properties;
    expect(always.outcome).toBe('failed');
    expect(always.failures.map((f) => f.seed)).toEqual([62, 63]);
    expect(always.messages).toHaveLength(1);
    expect(always.messages[0].source).toEqual({ file: main, line: 171 });
    expect(always.messages[0].text).toBe([
      'kv: acknowledged writes survive crashes {"acknowledged":8,"found":0}',
      'seed 62 at 57.265ms (and 1 more failing seed: 63)',
      `replay: seedfall replay -c ${config} -seed 62`,
      `shrink: seedfall shrink -c ${config} -seed 62`,
    ].join('\n'));
    expect(reachable.outcome).toBe('passed');
    expect(reachable.description).toBe('reachable: hit 9/11, true 9');
    expect(c.lastRun).toEqual({ seeds: '55-65', runs: 11, failed: 2 });
  });

  it('keeps two workspace folders\' configs of the same name apart, each failure on its own config', () => {
    // Multi-root: /w/kvlog and /v/kvlog, both configs named kvlog.
    const other = '/v/kvlog/seedfall.json';
    const otherMain = '/v/kvlog/main.go';
    const otherCatalog = catalog.map((e) => ({ ...e, source: { file: otherMain, line: e.source.line } }));
    const both = buildModel([...configs, { config: other, name: null, error: null }], [{ config, last_run: lastRun, catalog }, { config: other, last_run: null, catalog: otherCatalog }], [failure(62, 57_264_892)]);
    expect(both.map((c) => c.config)).toEqual([config, other]);
    const ids = both.flatMap((c) => c.properties.map((p) => p.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(both[0].properties[0].outcome).toBe('failed');
    expect(both[1].properties.map((p) => [p.outcome, p.source?.file])).toEqual([['unknown', otherMain], ['unknown', otherMain]]);
    expect(affects(other, otherMain) && !affects(other, main)).toBe(true);
  });

  it('gives a panic its own item at its line, and skips a property never reached', () => {
    const never = { ...lastRun, properties: [{ ...lastRun.properties[1], runs_hit: 0, runs_true: 0 }] };
    const panic = failure(5, 1_000_000, { kind: 'panic', message: 'index out of range', details: null, source: { file: main, line: 80 } });
    const [c] = buildModel(configs, [{ config, last_run: never, catalog }], [panic]);
    const byMessage = new Map(c.properties.map((p) => [p.message, p]));
    expect(byMessage.get('kv: index out of range')?.outcome).toBe('failed');
    expect(byMessage.get('kv: index out of range')?.source?.line).toBe(80);
    expect(byMessage.get('the client finished its writes')?.outcome).toBe('skipped');
    expect(byMessage.get('the client finished its writes')?.description).toBe('reachable: never reached in 11 runs');
    // Source order: line 80, then 171, then 191.
    expect(c.properties.map((p) => p.source?.line)).toEqual([80, 171, 191]);
  });

  it('shows a config that does not parse as an error without children', () => {
    const [c] = buildModel([{ config, name: null, error: '$.nodes[0].go: unknown field "dri" (did you mean "dir"?)' }], [{ config, last_run: null, catalog }], []);
    expect(c.error).toContain('unknown field');
    expect(c.properties).toEqual([]);
  });

  it('changes its signature exactly when what it shows changes', () => {
    const props: PropertiesOfConfig[] = [{ config, last_run: lastRun, catalog }];
    const a = signature(buildModel(configs, props, [failure(62, 1)]));
    expect(signature(buildModel(configs, props, [failure(62, 1)]))).toBe(a);
    expect(signature(buildModel(configs, props, []))).not.toBe(a);
  });

  it('counts every failing seed of the sweep, as the diagnostic does, though only some keep a folder', () => {
    const kept = [failure(62, 1, { finding_seeds: 38 }), failure(17, 2, { finding_seeds: 38 }), failure(63, 3, { finding_seeds: 38 })];
    expect(failureText(kept).split('\n')[1]).toBe('seed 62 at 0.000ms (and 37 more failing seeds: 17, 63, ...)');
  });

  it('formats more than six failing seeds with an ellipsis', () => {
    const many = [1, 2, 3, 4, 5, 6, 7, 8].map((s) => failure(s, s));
    expect(failureText(many).split('\n')[1]).toBe('seed 1 at 0.000ms (and 7 more failing seeds: 2, 3, 4, 5, 6, ...)');
  });
});

describe('continuous run and summaries', () => {
  it('reruns a config on a save of itself or of a guest source under its folder', () => {
    expect(affects(config, config)).toBe(true);
    expect(affects(config, main)).toBe(true);
    expect(affects(config, '/w/kvlog/sub/lib.rs')).toBe(true);
    expect(affects(config, '/w/kvlog/go.mod')).toBe(true);
    expect(affects(config, '/w/kvlog/README.md')).toBe(false);
    expect(affects(config, '/w/other/main.go')).toBe(false);
    expect(affects(config, '/w/kvlog/.seedfall/x.go')).toBe(false);
  });

  it('says what a job did', () => {
    expect(summary('seedfall.run', { exit: 1, result: { runs: 11, failed: 2 } })).toBe('11 runs, 2 failed');
    expect(summary('seedfall.explore', { exit: 0, result: { rounds: [1, 2, 3], failures: [] } })).toBe('explored 3 rounds, 0 failures');
  });
});
