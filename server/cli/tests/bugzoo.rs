//! The known-bug zoo (bugzoo/), its short and exact part: each bug's
//! committed failing schedule (found by a plain sweep, then shrunk) replays
//! to the published failure on the release that had the bug, and passes on
//! the release that fixed it; a short sweep of each fixed release passes.
//! The searches that found them, with runs and wall time to find, are
//! scripts/bench-zoo's.
mod common;
use common::*;
use serde_json::Value;

/// The bug's folder: bugzoo/<bug>, or examples/natscluster for issue 6888.
fn folder(bug: &str) -> std::path::PathBuf {
    match bug {
        "natscluster" => repo().join("examples/natscluster"),
        _ => repo().join("bugzoo").join(bug),
    }
}

/// The bug's config `name` in a scratch folder, its build folders made
/// absolute (failure folders then land in the scratch folder, not in bugzoo/).
fn zoo_config(bug: &str, name: &str) -> std::path::PathBuf {
    let folder = folder(bug);
    let mut cfg: Value = serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap();
    for node in cfg["nodes"].as_array_mut().unwrap() {
        let dir = node["go"]["dir"].as_str().unwrap().to_string();
        node["go"]["dir"] = Value::from(folder.join(dir).display().to_string());
    }
    config(&format!("zoo-{bug}-{name}"), &cfg.to_string())
}

fn replay(cfg: &std::path::Path, bug: &str) -> (i32, Value) {
    let schedule = folder(bug).join("schedules/found.json");
    let out = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", schedule.to_str().unwrap(), "-json"]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    (out.code, json(&out))
}

/// The affected release fails the schedule with `message`, details holding
/// `signature`, under the file-system models `label` names; the fixed
/// release passes it and a sweep of `seeds`.
fn found_again_and_cleared(bug: &str, message: &str, signature: &str, label: &str, seeds: &str) {
    let affected = zoo_config(bug, "seedfall.json");
    let (code, r) = replay(&affected, bug);
    assert_eq!(code, 1, "{bug}: the affected release passed its failing schedule: {}", r["verdict"]);
    let node = &r["failure"]["nodes"][0];
    assert_eq!(node["message"], message, "{bug}: {r:#}");
    assert!(node["details"].as_str().unwrap_or_default().contains(signature), "{bug}: {node}");
    assert_eq!(r["failure"]["model"]["label"], label, "{bug}");
    // Same schedule, same run: the replay is deterministic.
    let (_, again) = replay(&affected, bug);
    assert_eq!(again["trace_hash"], r["trace_hash"], "{bug}");

    let fixed = zoo_config(bug, "seedfall.fixed.json");
    let (code, r) = replay(&fixed, bug);
    assert_eq!(code, 0, "{bug}: the fixed release fails the schedule: {r:#}");
    let out = seedfall(&["run", "-c", fixed.to_str().unwrap(), "-seeds", seeds, "-json"]);
    assert_eq!(out.code, 0, "{bug}: the fixed release fails a sweep: {}\n{}", out.stdout, out.stderr);
}

#[test]
fn etcd_wal_14122_v3_5_6_cannot_start_after_a_torn_segment_tail_and_v3_5_7_repairs_it() {
    found_again_and_cleared("etcd-wal-14122", "the member starts after a crash", "max entry size limit exceeded", "holds on ext4 and xfs; not on btrfs", "1-40");
    // The fixed release went through the same torn tail, and repaired it.
    let fixed = zoo_config("etcd-wal-14122", "seedfall.fixed.json");
    let (_, r) = replay(&fixed, "etcd-wal-14122");
    let printed: Vec<&str> = r["events"].as_array().unwrap().iter().filter_map(|e| e["text"].as_str()).collect();
    assert!(printed.iter().any(|t| t.contains("repaired the WAL's torn tail")), "{printed:?}");
}

#[test]
fn nats_6600_v2_11_1_reuses_sequences_after_a_kill_between_blocks_and_v2_11_2_does_not() {
    found_again_and_cleared("nats-6600", "a publish acknowledgement's sequence is never handed out twice", "\"acknowledged seq\":1", "holds on ext4, xfs and btrfs", "1-20");
}

#[test]
fn nats_6888_a_v2_10_22_cluster_forgets_its_stream_after_three_kills_and_v2_10_23_does_not() {
    found_again_and_cleared("natscluster", "the cluster never forgets the acknowledged stream", "err_code=10059", "holds on ext4, xfs and btrfs", "1-4");
}

#[test]
fn etcd_14370_a_v3_5_4_single_member_acknowledges_a_put_before_its_wal_sync_and_v3_5_5_does_not() {
    found_again_and_cleared("etcd-14370", "every acknowledged put can be read back", "\"lost\":1", "holds on ext4 and xfs; not on btrfs", "1-4");
}
