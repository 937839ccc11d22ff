//! Go's storage stack, unmodified, under seedfall (the storage overlay):
//! bbolt, etcd's WAL, badger and pebble each open a store on the simulated
//! disk, write, sync, are crashed (with torn writes) and restarted, and check
//! that every acknowledged write is still there; a 3-node hashicorp/raft
//! cluster with raft-boltdb as its log, crashed and partitioned, keeps every
//! committed entry. And mmap and flock behave as the libraries expect.
mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;

/// A store under crashes (`rate` per virtual second, half of them inside a
/// disk operation) with torn writes.
fn store_config(test: &str, guest: &str, args: &str, rate: u32) -> std::path::PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "3s",
        "faults": {{ "crash": {{ "rate": {rate}, "restart_after": "1ms-20ms", "during_disk_op": 0.5 }}, "torn_writes": true }},
        "nodes": [ {{ "name": "db", "go": {{ "dir": "$GUESTS/{guest}", "storage": true }}, "args": [{args}] }} ] }}"#))
}

fn sweep(cfg: &Path, seeds: &str) -> Value {
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", seeds, "-json"]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    json(&out)
}

/// Seeds of `seeds` in which the store was crashed and reopened holding
/// acknowledged writes (so the check after the crash checked something).
fn reopened_with_data(cfg: &Path, seeds: std::ops::RangeInclusive<u64>) -> usize {
    seeds
        .filter(|s| {
            let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &s.to_string(), "-json"]));
            r["events"].as_array().unwrap().iter().any(|e| {
                e["text"].as_str().and_then(|t| t.strip_prefix("opened with ")).and_then(|t| t.split_whitespace().next()).and_then(|n| n.parse::<u64>().ok()).is_some_and(|n| n > 0)
            })
        })
        .count()
}

fn store_survives(test: &str, guest: &str, args: &str, seeds: u64, rate: u32) {
    let cfg = store_config(test, guest, args, rate);
    let out = sweep(&cfg, &format!("1-{seeds}"));
    assert_eq!(out["failures"], json!([]), "{guest}: {out}");
    let props = out["properties"].as_array().unwrap();
    assert!(props.iter().all(|p| p["runs_hit"].as_u64() == Some(seeds)), "the check ran in every seed: {props:?}");
    let reopened = reopened_with_data(&cfg, 1..=seeds);
    assert!(reopened * 2 >= seeds as usize, "{guest}: only {reopened} of {seeds} seeds crashed and reopened with data");
}

#[test]
fn bbolt_keeps_acknowledged_writes_through_crashes() {
    store_survives("bbolt", "go-bbolt", "", 10, 15);
    // The check is real: without fsync, bbolt corrupts or loses writes.
    let nosync = store_config("bbolt-nosync", "go-bbolt", r#""-nosync""#, 15);
    let out = sweep(&nosync, "1-20");
    assert!(!out["failures"].as_array().unwrap().is_empty(), "bbolt with NoSync never failed: {out}");
}

#[test]
fn etcd_wal_keeps_acknowledged_entries_through_crashes() {
    // 200 entries: the guest's 40 are written before most crashes land.
    store_survives("etcdwal", "go-etcdwal", r#""-entries", "200""#, 4, 15);
}

#[test]
fn badger_keeps_acknowledged_writes_through_crashes() {
    store_survives("badger", "go-badger", "", 8, 15);
}

#[test]
fn pebble_keeps_acknowledged_writes_through_crashes() {
    store_survives("pebble", "go-pebble", "", 8, 15);
}

fn raft_config(test: &str, args: &str) -> std::path::PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "3s",
        "nodes": [ {{ "name": "raft", "replicas": 3, "go": {{ "dir": "$GUESTS/go-raft", "storage": true, "net": true }}, "args": [{args}] }} ],
        "faults": {{ "crash": {{ "rate": 1, "restart_after": "20ms-200ms", "during_disk_op": 0.5 }}, "torn_writes": true,
                    "partition": {{ "rate": 1, "duration": "50ms-400ms" }} }} }}"#))
}

#[test]
fn a_raft_cluster_on_raft_boltdb_keeps_committed_entries() {
    let cfg = raft_config("raft", "");
    let out = sweep(&cfg, "1-3");
    assert_eq!(out["failures"], json!([]), "{out}");
    for seed in 1..=3u64 {
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed.to_string(), "-json"]));
        let events = r["events"].as_array().unwrap();
        let kinds: std::collections::BTreeSet<&str> = events.iter().filter(|e| e["event"] == "fault").map(|e| e["fault"]["kind"].as_str().unwrap()).collect();
        assert!(kinds.contains("crash") && kinds.contains("partition"), "seed {seed}: {kinds:?}");
        let committed = events.iter().filter_map(|e| e["text"].as_str()?.strip_suffix(" entries committed")?.parse::<u64>().ok()).max().unwrap_or(0);
        assert!(committed >= 20, "seed {seed}: only {committed} entries committed");
    }
    // Without fsync in its log, the cluster loses (or corrupts) committed entries.
    let nosync = raft_config("raft-nosync", r#""-nosync""#);
    assert!(!sweep(&nosync, "1-3")["failures"].as_array().unwrap().is_empty());
}

fn mmap_guest(test: &str, mode: &str) -> std::path::PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "1s",
        "nodes": [ {{ "name": "m", "go": {{ "dir": "$GUESTS/go-mmap", "storage": true }}, "args": ["-mode", "{mode}"] }} ] }}"#))
}

fn replay_crashed(cfg: &Path) -> Vec<String> {
    let file = cfg.parent().unwrap().join("faults.json");
    let name = cfg.parent().unwrap().file_name().unwrap().to_str().unwrap().rsplit_once('-').unwrap().0.to_string();
    let faults = json!({ "version": 1, "config": name, "seed": 1, "faults": [ { "kind": "crash", "node": "m", "at_ns": 100_000_000u64, "restart_after_ns": 5_000_000u64 } ] });
    std::fs::write(&file, faults.to_string()).unwrap();
    let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]));
    r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "output").map(|e| e["text"].as_str().unwrap().to_string()).collect()
}

#[test]
fn mmap_is_coherent_and_durable_only_when_synced() {
    let lines = replay_crashed(&mmap_guest("mmap", "mmap"));
    assert_eq!(
        lines,
        [
            r#"read-only mapping: "aaaa\x00\x00\x00\x00""#,
            r#"after pwrite: "aabb\x00\x00\x00\x00""#,
            r#"remapped after growing: "aabbcccc""#,
            r#"file before msync: "aabbcccc""#,
            r#"file after msync: "XXbbcccc""#,
            "mapping holds an unsynced change",
            r#"after crash: "XXbbcccc""#,
        ]
    );
}

#[test]
fn flock_conflicts_across_descriptors_and_a_crash_releases_it() {
    let lines = replay_crashed(&mmap_guest("flock", "flock"));
    assert_eq!(
        lines,
        [
            "a exclusive: <nil>",
            "a again: <nil>",
            // EAGAIN in Linux's words (`linux_errors`, on by default).
            "b shared: resource temporarily unavailable (would block: true)",
            "b shared after unlock: <nil>",
            "a exclusive while b shares: resource temporarily unavailable",
            "fcntl lock: <nil>",
            "holding b's lock",
            "after crash: exclusive lock <nil>",
        ]
    );
}

/// A storage build is the same program wherever its config is. Go writes
/// each `replace` path into the binary (its build info); the overlay's
/// patched copies once sat at an absolute path in the config's cache, so the
/// same program built from another folder was another binary, whose runs
/// took other turns: a committed schedule of bugzoo/etcd-14370 failed from
/// its own folder and passed from a copy of its config.
#[test]
fn a_storage_build_is_the_same_program_wherever_its_config_is() {
    let body = r#"{ "name": "where", "duration": "1s", "nodes": [ { "name": "db", "go": { "dir": "$GUESTS/go-bbolt", "storage": true } } ] }"#;
    // Each config with its own cache, next to it, as a user's has (the
    // tests' shared cache would hand the second build the first's wasm).
    let wasm = |test: &str| {
        let cfg = config(test, body);
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_seedfall"))
            .args(["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-1"])
            .env_remove("SEEDFALL_CACHE_DIR")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let dir = cfg.parent().unwrap().join(".seedfall/cache/wasm");
        let built: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "wasm")).collect();
        assert_eq!(built.len(), 1, "{built:?}");
        std::fs::read(&built[0]).unwrap()
    };
    let near = wasm("where");
    let far = wasm("where-from-a-folder-whose-name-is-much-longer-than-the-first");
    assert!(near == far, "the two builds differ ({} and {} bytes)", near.len(), far.len());
}
