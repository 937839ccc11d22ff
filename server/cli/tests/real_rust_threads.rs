//! examples/nebari: a real Rust storage engine that needs threads (Nebari
//! 0.5.5: every commit goes through its transaction log thread, a two-tree
//! transaction writes its trees on its commit thread pool, and the service
//! runs a compactor thread), built for wasm32-wasip1-threads and crashed
//! with torn writes, half of the crashes inside a disk operation. On ext4
//! every acknowledged transaction survives and stays atomic across its two
//! trees; under strict POSIX they do not, because Nebari never fsyncs a
//! folder (its files' names and the compaction's rename are not durable).
mod common;
use common::*;
use serde_json::Value;

const DURABLE: &str = "acknowledged transactions survive crashes";
const ATOMIC: &str = "a transaction is atomic across its trees";

fn property<'a>(out: &'a Value, message: &str) -> &'a Value {
    out["properties"].as_array().unwrap().iter().find(|p| p["message"] == message).unwrap_or_else(|| panic!("no property {message:?}: {out}"))
}

#[test]
fn acknowledged_nebari_transactions_survive_crashes_with_torn_writes_on_ext4() {
    let (cfg, seeds) = ("examples/nebari/seedfall.json", 30);
    let out = seedfall(&["run", "-c", cfg, "-seeds", &format!("1-{seeds}"), "-json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let out = json(&out);
    assert_eq!(out["failed"], 0, "{}", out["failure_findings"]);
    // Every run crashed and restarted at least once, and every restart
    // checked every key: the checks are not vacuous.
    for message in [DURABLE, ATOMIC, "recovery finds no version that was never written"] {
        let p = property(&out, message);
        assert_eq!(p["runs_hit"], seeds, "{message:?} ran in every seed: {p}");
        assert_eq!(p["runs_false"], 0, "{p}");
    }
    assert_eq!(property(&out, "a restart checked the recovered trees")["runs_hit"], seeds);
    // The workload reaches its end (in every seed, on this build) and the
    // compactor thread ran while the writers committed.
    assert!(property(&out, "every writer committed all its transactions")["runs_hit"].as_u64().unwrap() * 2 >= seeds, "{out}");
    assert_eq!(property(&out, "the compactor thread compacted a tree while writers committed")["runs_hit"], seeds);

    // One run in detail: crashes, some inside a disk operation of one of
    // the node's threads, each followed by a restart on what the disk kept.
    let inspect = seedfall(&["inspect", "-c", cfg, "-seed", "3", "-json"]);
    let events: Vec<Value> = inspect.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let count = |kind: &str| events.iter().filter(|e| e["event"] == kind).count();
    assert!(count("crash") >= 1 && count("restart") == count("crash"), "crashes {}, restarts {}: {}", count("crash"), count("restart"), inspect.stderr);
    let in_disk_op = events.iter().filter(|e| e["event"] == "fault" && e["fault"]["kind"] == "crash" && e["fault"]["disk_op"].is_u64()).count();
    assert!(in_disk_op >= 1, "a crash inside a disk operation: {}", inspect.stdout);
    assert!(!events.iter().any(|e| e["event"] == "failure" || e["event"] == "trap"), "{}", inspect.stdout);
}

#[test]
fn under_strict_posix_nebari_loses_acknowledged_transactions_it_never_made_durable_by_name() {
    let cfg = "examples/nebari/seedfall.posix.json";
    let out = seedfall(&["run", "-c", cfg, "-seeds", "1-20", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() >= 10, "{} of 20 seeds fail: {out}", failures.len());
    for f in failures {
        let message = f["nodes"][0]["message"].as_str().unwrap();
        assert!(message == DURABLE || message == ATOMIC, "{f}");
        // Portable durability only: the same faults pass on ext4, xfs and
        // btrfs, which make names durable with the next fsync of a file.
        assert_eq!(f["model"]["label"], "only under strict POSIX (portable durability): not on ext4, xfs or btrfs", "{f}");
    }
    // What a crash takes: a file Nebari created and fsynced, but whose name
    // it never fsynced (its folder), or the rename of a compacted tree over
    // the old one.
    let first = failures.iter().find(|f| f["folder"].is_string()).expect("a kept folder");
    let faults = repo().join(first["folder"].as_str().unwrap()).join("faults.json");
    let inspect = seedfall(&["inspect", "-c", cfg, "-faults", faults.to_str().unwrap(), "-kind", "crash"]);
    assert!(inspect.stdout.contains("never made durable") || inspect.stdout.contains("unlink undone"), "{}", inspect.stdout);
}
