//! Edge coverage (`coverage::Mode::Edges`) on real guests: the instrumented
//! Go and Rust modules validate, run, and report edges; function coverage
//! still works. Prints the size and wall-time cost against function mode.
use seedfall_search::{cache::Cache, modules, recipe};
use seedfall_sim::coverage::{instrument_with, Mode};
use seedfall_sim::{run, Config, Engine, EngineOptions, Outcome, Program, RunOptions, Schedule};
use std::path::Path;

fn config(name: &str) -> Config {
    std::env::set_var("SEEDFALL_CACHE_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/seedfall-test-cache"));
    Config::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests").join(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// The config's program with every module instrumented in `mode`, and each
/// module's (raw, instrumented) size.
fn program(config: &Config, mode: Mode) -> (Program, Vec<(String, usize, usize)>) {
    let cache = Cache::for_config(config.dir());
    let engine = Engine::new(EngineOptions { canonicalize_nans: config.determinism.canonicalize_nans, memory_bytes_max: config.limits.memory_bytes_max, ..EngineOptions::default() }).unwrap();
    let (mut compiled, mut layouts, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
    for node in &config.nodes {
        let built = recipe::wasm_for(node, &cache, &mut |_| {}).unwrap();
        let raw = std::fs::read(&built.wasm).unwrap();
        let started = std::time::Instant::now();
        let inst = instrument_with(&raw, mode).unwrap_or_else(|e| panic!("{}: {e}", node.name));
        eprintln!("{} {mode:?}: instrumented in {:?}", node.name, started.elapsed());
        assert_eq!(inst.layout.edges, mode == Mode::Edges);
        sizes.push((node.name.clone(), raw.len(), inst.wasm.len()));
        compiled.push(modules::compiled_bytes(&engine, &inst.wasm, &built.wasm, &cache, &mut |_| {}).unwrap());
        layouts.push(Some(inst.layout));
    }
    (Program::with_coverage(&engine, config.clone(), compiled, layouts).unwrap(), sizes)
}

fn sweep(p: &Program, seeds: std::ops::Range<u64>) -> (Vec<Outcome>, std::time::Duration) {
    let started = std::time::Instant::now();
    let outcomes = seeds.map(|s| run(p, &Schedule::seed(s), &RunOptions::default())).collect();
    (outcomes, started.elapsed())
}

fn compare(config_name: &str, seeds: std::ops::Range<u64>) {
    let config = config(config_name);
    let (funcs, sizes_f) = program(&config, Mode::Functions);
    let (edges, sizes_e) = program(&config, Mode::Edges);
    let (out_f, wall_f) = sweep(&funcs, seeds.clone());
    let (out_e, wall_e) = sweep(&edges, seeds.clone());
    for ((name, raw, f), (_, _, e)) in sizes_f.iter().zip(&sizes_e) {
        eprintln!("{config_name} {name}: raw {raw} B, functions {f} B (+{:.1}%), edges {e} B (+{:.1}%)", pct(*f, *raw), pct(*e, *raw));
    }
    eprintln!("{config_name} seeds {seeds:?}: wall functions {wall_f:?}, edges {wall_e:?} ({:.2}x)", wall_e.as_secs_f64() / wall_f.as_secs_f64());
    for (f, e) in out_f.iter().zip(&out_e) {
        assert!(f.edges.is_empty(), "no edges without edge probes");
        assert_eq!(f.verdict, e.verdict, "seed {}: {:?} / {:?}", f.seed, f.failure, e.failure);
        let fuel = |o: &Outcome| o.end_time.nanos();
        eprintln!(
            "  seed {}: steps {} / {}, virtual end {} / {} ns, functions {} / {}, edge pairs {} (distinct indices per node {:?})",
            f.seed,
            f.stats.steps,
            e.stats.steps,
            fuel(f),
            fuel(e),
            f.coverage.values().map(Vec::len).sum::<usize>(),
            e.coverage.values().map(Vec::len).sum::<usize>(),
            e.edges.values().map(Vec::len).sum::<usize>(),
            e.edges.values().map(|v| v.iter().map(|p| p.index).collect::<std::collections::BTreeSet<_>>().len()).collect::<Vec<_>>()
        );
        for node in &config.nodes {
            let fe = &e.coverage[&node.name];
            let ff = &f.coverage[&node.name];
            // Timing differs, so the runs may differ a little; the bulk of
            // the functions reached is the same.
            assert!(fe.len() * 10 >= ff.len() * 9 && ff.len() * 10 >= fe.len() * 9, "{}: {} vs {} functions", node.name, ff.len(), fe.len());
            let pairs = &e.edges[&node.name];
            assert!(pairs.len() > fe.len(), "{}: more edge pairs ({}) than functions ({})", node.name, pairs.len(), fe.len());
            assert!(pairs.windows(2).all(|w| (w[0].index, w[0].bucket) < (w[1].index, w[1].bucket)), "sorted by (index, bucket), no duplicates");
            assert!(pairs.iter().all(|p| p.bucket < 8 && p.index < 1 << 16 && p.at_ns <= e.end_time.nanos()));
        }
    }
    // Deterministic under edges too.
    let (again, _) = sweep(&edges, seeds.start..seeds.start + 1);
    assert_eq!(again[0].trace_hash, out_e[0].trace_hash);
    assert_eq!(again[0].edges, out_e[0].edges);
}

fn pct(a: usize, b: usize) -> f64 {
    (a as f64 / b as f64 - 1.0) * 100.0
}

#[test]
fn edges_on_real_go_and_rust_guests() {
    compare("basics.json", 1..5);
}
