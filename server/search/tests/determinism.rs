//! Determinism inside one process: the same schedule twice, and concurrently
//! on two threads, gives the same trace; the library API a sweep uses.
use seedfall_search::{load, SeedRange, SweepOptions};
use seedfall_sim::{run, RunOptions, Schedule};
use std::path::Path;
use std::sync::atomic::AtomicBool;

fn project() -> seedfall_search::Project {
    std::env::set_var("SEEDFALL_CACHE_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/seedfall-test-cache"));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests/basics.json");
    load(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn same_schedule_twice_in_one_process_gives_the_same_trace() {
    let p = project();
    let a = run(&p.program, &Schedule::seed(11), &RunOptions::default());
    let b = run(&p.program, &Schedule::seed(11), &RunOptions::default());
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.trace, b.trace);
    assert_eq!(a.stats.steps, b.stats.steps);
    assert_eq!(a.end_time, b.end_time);
    let c = run(&p.program, &Schedule::seed(12), &RunOptions::default());
    assert_ne!(a.trace_hash, c.trace_hash);
}

#[test]
fn concurrent_runs_do_not_disturb_each_other() {
    let p = project();
    let alone = run(&p.program, &Schedule::seed(5), &RunOptions { profile: true, ..RunOptions::default() });
    let hashes: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2).map(|_| s.spawn(|| run(&p.program, &Schedule::seed(5), &RunOptions::default()).trace_hash)).collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(hashes, vec![alone.trace_hash; 2], "profiling and threads must not change a run");
}

#[test]
fn sweep_merges_in_seed_order() {
    let p = project();
    for jobs in [1, 2] {
        let mut seen = Vec::new();
        let summary = seedfall_search::sweep(&p.program, &SweepOptions { seeds: SeedRange::parse("20-35").unwrap(), jobs, profile: false, mutation: None, novelty: None, prefix: None, faults: None, guest_profile: None }, None, &AtomicBool::new(false), |o| seen.push(o.seed));
        assert_eq!(seen, (20..=35).collect::<Vec<_>>());
        assert_eq!(summary.runs, 16);
    }
}
