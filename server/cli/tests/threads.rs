//! Rust guests with threads (wasm32-wasip1-threads), unmodified, scheduled
//! as fibers of their node: a planted race found by a sweep and kept by
//! shrink, Condvar and channels, a rayon pool, crashes that end every
//! thread, and the same traces at any -j and in two processes.
mod common;
use common::*;
use serde_json::Value;

fn node(name: &str, bin: &str, extra: &str) -> String {
    format!(r#"{{ "name": "{name}", "cargo": {{ "dir": "$GUESTS/rust-threads", "bin": "{bin}", "target": "wasm32-wasip1-threads" }} {extra} }}"#)
}

fn sweep(cfg: &std::path::Path, seeds: &str, jobs: &str) -> Value {
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", seeds, "-json", "-hashes", "-j", jobs]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    json(&out)
}

fn hashes(v: &Value) -> Vec<(u64, String)> {
    v["trace_hashes"].as_array().unwrap().iter().map(|p| (p[0].as_u64().unwrap(), p[1].as_str().unwrap().to_string())).collect()
}

#[test]
fn a_planted_race_between_threads_is_found_by_a_sweep_replayed_and_kept_by_shrink() {
    let cfg = one_node_config("threads-race", &node("race", "race", r#", "args": ["yield"]"#), "");
    let one = sweep(&cfg, "1-30", "1");
    let failed = one["failed"].as_u64().unwrap();
    // A yield between check and act lets the other teller in.
    assert!(failed > 0, "{failed} of 30 failed: {}", one["failure_findings"]);
    // The first failure that kept its folder (a finding keeps its shortest).
    let f = one["failures"].as_array().unwrap().iter().find(|f| f["folder"].is_string()).expect("a failure folder");
    assert_eq!(f["nodes"][0]["message"], "race: the account is never overdrawn", "{f}");
    // The same runs at -j 2 and in another process: the same traces.
    assert_eq!(hashes(&sweep(&cfg, "1-30", "2")), hashes(&one));
    assert_eq!(hashes(&sweep(&cfg, "1-30", "1")), hashes(&one));
    assert!(hashes(&one).iter().map(|(_, h)| h).collect::<std::collections::BTreeSet<_>>().len() > 10, "interleavings differ by seed");
    // Its seed replays to the same failure, and shrink keeps it.
    let seed = f["seed"].as_u64().unwrap().to_string();
    let replay = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed]);
    assert_eq!(replay.code, 1, "{}", replay.stdout);
    assert!(replay.stdout.contains("race: the account is never overdrawn"), "{}", replay.stdout);
    let folder = repo().join(f["folder"].as_str().unwrap());
    let shrink = seedfall(&["shrink", "-c", cfg.to_str().unwrap(), "-seed", &seed, "-faults", folder.join("faults.json").to_str().unwrap()]);
    assert_eq!(shrink.code, 0, "shrink keeps the failure: {}\n{}", shrink.stdout, shrink.stderr);
    assert!(shrink.stdout.contains("shrunk 0 faults to 0") && folder.join("faults.shrunk.json").is_file(), "{}", shrink.stdout);
    let again = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", folder.join("faults.shrunk.json").to_str().unwrap()]);
    assert_eq!(again.code, 1, "the shrunk schedule still fails: {}", again.stdout);
}

#[test]
fn threads_block_and_wake_through_condvar_and_channels_and_a_rayon_pool_runs_its_workers() {
    let cfg = config(
        "threads-sync",
        &format!(
            r#"{{ "duration": "5s", "nodes": [ {}, {} ] }}"#,
            node("pingpong", "pingpong", r#", "args": ["200"]"#),
            node("pool", "pool", r#", "env": { "RAYON_NUM_THREADS": "4" }"#)
        ),
    );
    let v = sweep(&cfg, "1-10", "2");
    assert_eq!(v["failed"], 0, "{}", v["failure_findings"]);
    let hit = |m: &str| v["properties"].as_array().unwrap().iter().find(|p| p["message"] == m).map(|p| p["runs_true"].as_u64().unwrap()).unwrap_or(0);
    assert_eq!(hit("pingpong: pong answers each ping"), 10);
    assert_eq!(hit("pool: the pool has the workers asked for"), 10, "four rayon workers in every run");
    assert_eq!(hit("pool: the parallel sum is exact"), 10);
    assert_eq!(hashes(&v), hashes(&sweep(&cfg, "1-10", "1")));
}

#[test]
fn a_crash_ends_every_thread_of_the_node_and_it_restarts_fresh() {
    let cfg = config(
        "threads-crash",
        &format!(r#"{{ "duration": "300ms", "faults": {{ "crash": {{ "rate": 1000, "restart_after": "1ms-5ms" }} }}, "nodes": [ {} ] }}"#, node("pingpong", "pingpong", r#", "args": ["1000"]"#)),
    );
    let out = seedfall(&["inspect", "-c", cfg.to_str().unwrap(), "-seed", "3", "-json"]);
    let events: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let crashes = events.iter().filter(|e| e["event"] == "crash").count();
    let restarts = events.iter().filter(|e| e["event"] == "restart").count();
    assert!(crashes >= 1 && restarts >= 1, "crashes {crashes}, restarts {restarts}: {}", out.stderr);
    // No thread of an old incarnation outlives its crash: nothing fails.
    assert!(!events.iter().any(|e| e["event"] == "failure" || e["event"] == "trap"), "{}", out.stdout);
    let v = sweep(&cfg, "1-8", "2");
    assert_eq!(v["failed"], 0, "{}", v["failure_findings"]);
    assert_eq!(hashes(&v), hashes(&sweep(&cfg, "1-8", "1")));
}

#[test]
fn a_panic_in_a_spawned_thread_fails_the_node_at_its_line() {
    let cfg = one_node_config("threads-panic", &node("worker", "panic", ""), "");
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3", "-json"]);
    let v = json(&out);
    assert_eq!(v["failed"], 3, "{}", out.stdout);
    let f = &v["failures"][0]["nodes"][0];
    assert_eq!(f["message"], "the worker gave up with 3 left", "{f}");
    let line = line_of(&guests().join("rust-threads/src/bin/panic.rs"), "panic!(");
    assert!(f["location"].as_str().unwrap().ends_with(&format!("panic.rs:{line}")), "{f}");
}
