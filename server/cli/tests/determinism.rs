//! Determinism is tested, not assumed: every example and test config gives
//! the same trace hash for every seed at -j 1 and -j 2 (300 seeds of each
//! example, 24 of each test config), and the same replay in two processes.
mod common;
use common::*;

const CONFIGS: &[&str] = &[
    "examples/ledger/seedfall.json",
    "examples/kvlog/seedfall.json",
    "examples/kvlog/seedfall.fixed.json",
    "examples/explore/seedfall.json",
    "examples/explore/seedfall.rust.json",
    "examples/httpkv/seedfall.json",
    "examples/httpkv/seedfall.fixed.json",
    "tests/guests/basics.json",
    "tests/guests/props.json",
    "tests/guests/antithesis.json",
    "tests/guests/net.json",
    "tests/guests/disk.json",
    "tests/guests/storage.json",
];

#[test]
fn every_config_gives_the_same_hashes_at_any_jobs() {
    for cfg in CONFIGS {
        let n = if cfg.starts_with("examples/") { 300 } else { 24 };
        let seeds = format!("1-{n}");
        let a = json(&seedfall(&["run", "-c", cfg, "-seeds", &seeds, "-j", "1", "-json", "-hashes"]));
        let b = json(&seedfall(&["run", "-c", cfg, "-seeds", &seeds, "-j", "2", "-json", "-hashes"]));
        assert_eq!(a["trace_hashes"], b["trace_hashes"], "{cfg}");
        assert_eq!(a["trace_hashes"].as_array().unwrap().len(), n, "{cfg}");
        let distinct: std::collections::BTreeSet<&str> = a["trace_hashes"].as_array().unwrap().iter().map(|h| h[1].as_str().unwrap()).collect();
        assert!(distinct.len() > 4, "{cfg}: seeds should differ ({} distinct)", distinct.len());
    }
}

#[test]
fn every_config_replays_identically_in_two_processes() {
    for cfg in CONFIGS {
        for seed in ["3", "11"] {
            let a = seedfall(&["replay", "-c", cfg, "-seed", seed]);
            let b = seedfall(&["replay", "-c", cfg, "-seed", seed]);
            assert!(a.stdout.contains("trace hash "), "{cfg}: {}", a.stderr);
            assert_eq!(without_real_times(&a.stdout), without_real_times(&b.stdout), "{cfg} seed {seed}");
        }
    }
}
