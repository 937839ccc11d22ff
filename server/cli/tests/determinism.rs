//! Determinism is tested, not assumed: every example and test config gives
//! the same trace hash for every seed at -j 1 and -j 2 (300 seeds of most
//! toy examples, 100 of httpkv's, whose runs talk HTTP; 5 to 40 of the
//! examples on real software, whose runs cost 10 to 100 times more; 24 of
//! each test config, 12 of net.json), and the same replay in two processes.
//! Five seeds is the least a config gets: the sweep asserts more than four
//! distinct hashes.
mod common;
use common::*;

/// Each config and the seeds swept.
const CONFIGS: &[(&str, usize)] = &[
    ("examples/ledger/seedfall.json", 300),
    ("examples/kvlog/seedfall.json", 300),
    ("examples/kvlog/seedfall.fixed.json", 300),
    ("examples/explore/seedfall.json", 300),
    ("examples/explore/seedfall.rust.json", 300),
    ("examples/explore-coverage/seedfall.json", 300),
    ("examples/explore-climb/seedfall.json", 300),
    ("examples/httpkv/seedfall.json", 100),
    ("examples/httpkv/seedfall.fixed.json", 100),
    ("examples/walkv/seedfall.json", 40),
    ("examples/walkv/seedfall.posix.json", 24),
    ("examples/walkv/seedfall.fixed.json", 24),
    ("examples/sqlitekv/seedfall.json", 24),
    ("examples/raftkv/seedfall.json", 5),
    ("examples/raftkv/seedfall.broken.json", 5),
    ("examples/raftkv/seedfall.idle.json", 5),
    ("examples/jetstream/seedfall.json", 5),
    ("examples/natscluster/seedfall.json", 5),
    ("bugzoo/etcd-wal-14122/seedfall.json", 5),
    ("tests/guests/basics.json", 24),
    ("tests/guests/props.json", 24),
    ("tests/guests/antithesis.json", 24),
    ("tests/guests/net.json", 12),
    ("tests/guests/disk.json", 24),
    ("tests/guests/storage.json", 24),
    ("tests/guests/threads.json", 24),
];

#[test]
fn every_config_gives_the_same_hashes_at_any_jobs() {
    for &(cfg, n) in CONFIGS {
        let seeds = format!("1-{n}");
        // The engine alone: no snapshot serves a plain sweep, and -snapshots
        // off says so (snapshots.rs checks them against these runs).
        let a = json(&seedfall(&["run", "-c", cfg, "-seeds", &seeds, "-j", "1", "-json", "-hashes", "-snapshots", "off"]));
        let b = json(&seedfall(&["run", "-c", cfg, "-seeds", &seeds, "-j", "2", "-json", "-hashes", "-snapshots", "off"]));
        assert_eq!(a["trace_hashes"], b["trace_hashes"], "{cfg}");
        assert_eq!(a["trace_hashes"].as_array().unwrap().len(), n, "{cfg}");
        let distinct: std::collections::BTreeSet<&str> = a["trace_hashes"].as_array().unwrap().iter().map(|h| h[1].as_str().unwrap()).collect();
        assert!(distinct.len() > 4, "{cfg}: seeds should differ ({} distinct)", distinct.len());
    }
}

#[test]
fn every_config_replays_identically_in_two_processes() {
    for &(cfg, _) in CONFIGS {
        for seed in ["3", "11"] {
            let a = seedfall(&["replay", "-c", cfg, "-seed", seed]);
            let b = seedfall(&["replay", "-c", cfg, "-seed", seed]);
            assert!(a.stdout.contains("trace hash "), "{cfg}: {}", a.stderr);
            assert_eq!(without_real_times(&a.stdout), without_real_times(&b.stdout), "{cfg} seed {seed}");
        }
    }
}
