//! End-to-end tests of the engine on real Go and Rust guests, through the
//! real binary: verdicts, failure explanations, determinism, config errors.
mod common;
use common::*;

fn p(path: &std::path::Path) -> &str {
    path.to_str().unwrap()
}

#[test]
fn replay_is_identical_in_two_processes() {
    let a = seedfall(&["replay", "-c", "tests/guests/basics.json", "-seed", "7"]);
    let b = seedfall(&["replay", "-c", "tests/guests/basics.json", "-seed", "7"]);
    assert_eq!(a.code, 0, "{}{}", a.stdout, a.stderr);
    assert_eq!(without_real_times(&a.stdout), without_real_times(&b.stdout));
    assert!(a.stdout.contains("trace hash "));
}

#[test]
fn replay_stamps_every_line_with_virtual_time_and_node() {
    let out = seedfall(&["replay", "-c", "tests/guests/basics.json", "-seed", "3"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let go_line = out.stdout.lines().find(|l| l.contains("wall clock year")).expect("go output");
    assert!(go_line.trim_start().starts_with(|c: char| c.is_ascii_digit()) && go_line.contains("ms  gobasic"), "{go_line}");
    assert!(go_line.contains("wall clock year 2024"), "realtime starts at the fixed epoch: {go_line}");
    assert!(out.stdout.contains("rustbasic  | realtime starts at 1704067200"));
    assert!(out.stdout.contains("gobasic    | read back 3 lines"), "Go file round trip:\n{}", out.stdout);
    assert!(out.stdout.contains("rustbasic  | read back "), "Rust file round trip");
    assert!(out.stdout.contains("dir entry log.txt 36 bytes") || out.stdout.contains("dir entry log.txt"), "Go readdir");
    assert!(out.stdout.contains("PASS seed 3 at t="));
}

#[test]
fn sweep_results_do_not_depend_on_jobs() {
    let a = json(&seedfall(&["run", "-c", "tests/guests/basics.json", "-seeds", "1-40", "-j", "1", "-json", "-hashes"]));
    let b = json(&seedfall(&["run", "-c", "tests/guests/basics.json", "-seeds", "1-40", "-j", "2", "-json", "-hashes"]));
    assert_eq!(a["trace_hashes"], b["trace_hashes"]);
    assert_eq!(a["runs"], 40);
    let hashes: std::collections::BTreeSet<String> =
        a["trace_hashes"].as_array().unwrap().iter().map(|h| h[1].as_str().unwrap().to_string()).collect();
    assert_eq!(hashes.len(), 40, "every seed gives its own run");
}

#[test]
fn different_seeds_interleave_goroutines_differently() {
    let mut orders = std::collections::BTreeSet::new();
    for seed in 1..=8 {
        let out = seedfall(&["replay", "-c", "tests/guests/basics.json", "-seed", &seed.to_string()]);
        let order: Vec<&str> = out.stdout.lines().filter(|l| l.contains("| worker ")).map(|l| l.split("| ").nth(1).unwrap().get(..8).unwrap()).collect();
        assert_eq!(order.len(), 3, "{}", out.stdout);
        orders.insert(order.join(","));
    }
    assert!(orders.len() >= 3, "only {} goroutine orders over 8 seeds: {orders:?}", orders.len());
}

#[test]
fn go_panic_names_message_and_source_line() {
    let cfg = one_node_config("go-panic", &go_node("ledger", "panic-sometimes"), "");
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1-30", "-json"]));
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty() && failures.len() < 30, "panics in some seeds only: {}", failures.len());
    let line = line_of(&guests().join("go-basic/main.go"), "panic(fmt.Sprintf(\"the ledger");
    for f in failures {
        let node = &f["nodes"][0];
        assert_eq!(node["node"], "ledger");
        assert_eq!(node["kind"], "panic");
        assert!(node["message"].as_str().unwrap().starts_with("the ledger is corrupt at entry "), "{node}");
        let loc = node["location"].as_str().unwrap();
        assert!(loc.ends_with(&format!("go-basic/main.go:{line}")), "{loc}");
    }
}

#[test]
fn rust_panic_names_message_and_source_line() {
    let cfg = one_node_config("rust-panic", &rust_node("bank", "panic-sometimes"), "");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-30"]);
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let line = line_of(&guests().join("rust-basic/src/main.rs"), "panic!(\"balance went negative");
    assert!(out.stdout.contains("  bank: balance went negative: -"), "{}", out.stdout);
    assert!(out.stdout.contains(&format!("rust-basic/src/main.rs:{line}")), "{}", out.stdout);
    let first = out.stdout.lines().find(|l| l.starts_with("FAIL seed ")).unwrap();
    assert!(first.contains(" at t=") && first.contains(" scheduler steps, ") && first.ends_with(" real)"), "{first}");
    assert!(out.stdout.contains("  replay it: seedfall replay -c "), "{}", out.stdout);
}

#[test]
fn nonzero_exit_fails_the_run() {
    let cfg = one_node_config("exit3", &go_node("g", "exit3"), "");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-3"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("  g: exited with code 3"), "{}", out.stdout);
    let cfg = one_node_config("exit7", &rust_node("r", "exit7"), "");
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert!(out.stdout.contains("  r: exited with code 7"), "{}", out.stdout);
}

#[test]
fn a_trap_that_is_not_a_panic_is_reported_as_a_trap() {
    let cfg = one_node_config("trap", &rust_node("r", "trap"), "");
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]));
    let node = &out["failures"][0]["nodes"][0];
    assert_eq!(node["kind"], "trap");
    assert!(node["message"].as_str().unwrap().contains("unreachable"), "{node}");
}

#[test]
fn the_watchdog_stops_a_node_that_never_blocks() {
    let cfg = one_node_config("spin", &go_node("g", "spin"), r#""limits": {"watchdog_instructions": 20000000},"#);
    let out = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]));
    let node = &out["failures"][0]["nodes"][0];
    assert_eq!(node["kind"], "watchdog");
    assert_eq!(node["message"], "node g ran 20000000 instructions without blocking (limits.watchdog_instructions)");
}

#[test]
fn computation_costs_virtual_time() {
    // The guest spins on time.Since until 10ms passed: only compute can move the clock.
    let cfg = one_node_config("spin-clock", &go_node("g", "spin-clock"), "");
    let out = json(&seedfall(&["replay", "-c", p(&cfg), "-seed", "1", "-json"]));
    assert_eq!(out["verdict"], "pass");
    assert!(out["end_time_ns"].as_u64().unwrap() >= 10_000_000);
    let printed = out["events"].as_array().unwrap().iter().any(|e| e["text"] == "spun %!d(bool=true) times for true");
    assert!(printed, "{out}");
}

#[test]
fn unsupported_host_calls_return_an_error_and_are_logged_once() {
    let cfg = one_node_config("symlink", &rust_node("r", "symlink"), "");
    let out = json(&seedfall(&["replay", "-c", p(&cfg), "-seed", "1", "-json"]));
    assert_eq!(out["verdict"], "pass", "{out}");
    let events = out["events"].as_array().unwrap();
    let unsupported: Vec<_> = events.iter().filter(|e| e["event"] == "unsupported").collect();
    assert_eq!(unsupported.len(), 1, "{events:?}");
    assert_eq!(unsupported[0]["call"], "wasi_snapshot_preview1::path_symlink");
    let failed = events.iter().filter(|e| e["text"].as_str().is_some_and(|t| t.starts_with("symlink failed"))).count();
    assert_eq!(failed, 2);
}

#[test]
fn config_errors_name_file_path_and_expectation() {
    let cfg = config("bad-config", r#"{ "duration": "1s", "nodes": [ { "name": "a", "wasm": "a.wasm", "replica": 2 } ] }"#);
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains(&format!("{}: $.nodes[0].replica: unknown field \"replica\" (did you mean \"replicas\"?)", cfg.display())), "{}", out.stderr);
    let cfg = config("missing-wasm", r#"{ "duration": "1s", "nodes": [ { "name": "a", "wasm": "nowhere.wasm" } ] }"#);
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("nowhere.wasm does not exist"), "{}", out.stderr);
    let out = seedfall(&["run", "-c", "tests/guests/basics.json", "-seeds", "9-3"]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("-seeds: the seed range 9-3 is empty"), "{}", out.stderr);
}

#[test]
fn replicas_are_named_and_run_separately() {
    let cfg = config(
        "replicas",
        r#"{ "duration": "5s", "nodes": [ { "name": "client", "replicas": 3, "go": { "dir": "$GUESTS/go-basic" }, "args": ["-mode", "files"] } ] }"#,
    );
    let out = seedfall(&["replay", "-c", p(&cfg), "-seed", "2"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for i in 1..=3 {
        assert!(out.stdout.contains(&format!("client#{i}  | read back 3 lines")), "each replica has its own disk:\n{}", out.stdout);
    }
}

#[test]
fn json_summary_reports_rates() {
    let out = json(&seedfall(&["run", "-c", "tests/guests/basics.json", "-seeds", "1-10", "-json"]));
    assert_eq!(out["version"], 2);
    assert_eq!(out["failed"], 0);
    assert!(out["seeds_per_second"].as_f64().unwrap() > 0.0);
    assert!(out["virtual_seconds_per_wall_second"].as_f64().unwrap() > 0.0);
}
