//! The disk's durability rules and every fault kind, on a real Go guest
//! (tests/guests/go-disk), driven by explicit schedule files; and schedules
//! drawn from config rates round-tripping through failure folders.
mod common;
use common::*;
use serde_json::{json, Value};

fn disk_config(test: &str, mode: &str, extra: &str) -> std::path::PathBuf {
    config(
        test,
        &format!(r#"{{ "name": "disk", "duration": "2s", {extra} "nodes": [ {{ "name": "d", "go": {{ "dir": "$GUESTS/go-disk" }}, "args": ["-mode", "{mode}"] }} ] }}"#),
    )
}

/// Replays `faults` on the config; returns the replay JSON.
fn replay_with(cfg: &std::path::Path, faults: Value) -> Value {
    let file = cfg.parent().unwrap().join("faults.json");
    let doc = json!({ "version": 1, "config": "disk", "seed": 1, "faults": faults, "branches": [] });
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]);
    json(&out)
}

fn printed(r: &Value) -> Vec<String> {
    r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "output" && e["stream"] == "stdout").map(|e| e["text"].as_str().unwrap().to_string()).collect()
}

fn crash_at(ms: u64) -> Value {
    json!({ "kind": "crash", "node": "d", "at_ns": ms * 1_000_000, "restart_after_ns": 5_000_000 })
}

#[test]
fn unsynced_write_is_lost_synced_write_kept() {
    let r = replay_with(&disk_config("unsynced", "unsynced", ""), json!([crash_at(100)]));
    assert_eq!(r["verdict"], "pass", "{r}");
    assert!(printed(&r).contains(&"after crash: \"synced\"".to_string()), "{:?}", printed(&r));
    assert!(r["events"].as_array().unwrap().iter().any(|e| e["event"] == "restart"));
}

#[test]
fn a_kill_takes_the_process_and_the_disk_keeps_every_write() {
    // A kill takes the process only: the unsynced write and the rename
    // without a folder fsync are both still there after the restart.
    let mut kill = crash_at(100);
    kill["kill"] = json!(true);
    let r = replay_with(&disk_config("kill", "unsynced", ""), json!([kill.clone()]));
    assert!(printed(&r).contains(&"after crash: \"synced unsynced\"".to_string()), "{:?}", printed(&r));
    let crash = r["events"].as_array().unwrap().iter().find(|e| e["event"] == "crash").unwrap().clone();
    assert_eq!(crash["kill"], true, "{crash}");
    assert_eq!(crash["sectors_lost"], 0, "{crash}");
    let r = replay_with(&disk_config("kill-rename", "rename", ""), json!([kill]));
    assert!(printed(&r).contains(&"after crash: final=true tmp=false".to_string()), "{:?}", printed(&r));
    // A drawn mix: with "kill": 1 every crash is a kill, recorded as one.
    let cfg = disk_config("kill-rate", "osync", r#""faults": { "crash": { "rate": 20, "restart_after": "1ms-20ms", "kill": 1 } },"#);
    let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "1", "-json"]));
    let faults: Vec<&Value> = r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "fault").collect();
    assert!(!faults.is_empty() && faults.iter().all(|f| f["fault"]["kill"] == true), "{faults:?}");
}

#[test]
fn rename_without_directory_fsync_is_undone() {
    let r = replay_with(&disk_config("rename", "rename", ""), json!([crash_at(100)]));
    assert!(printed(&r).contains(&"after crash: final=false tmp=true".to_string()), "{:?}", printed(&r));
}

#[test]
fn torn_writes_keep_whole_sectors_only() {
    let cfg = disk_config("torn", "torn", "");
    let mut crash = crash_at(100);
    crash["torn"] = json!(true);
    let r = replay_with(&cfg, json!([crash]));
    let line = printed(&r).into_iter().find(|l| l.starts_with("after crash:")).unwrap();
    let crash_event = r["events"].as_array().unwrap().iter().find(|e| e["event"] == "crash").unwrap().clone();
    let kept = crash_event["sectors_torn_kept"].as_u64().unwrap();
    let lost = crash_event["sectors_lost"].as_u64().unwrap();
    assert_eq!(kept + lost, 8, "8 dirty sectors: {crash_event}");
    let listed = line.split('[').nth(1).unwrap().trim_end_matches(']').split_whitespace().count() as u64;
    assert_eq!(listed, kept, "every kept sector is whole: {line}");
    // Without torn writes nothing of the unsynced write survives.
    let r = replay_with(&cfg, json!([crash_at(100)]));
    assert!(printed(&r).contains(&"after crash: 0 bytes, sectors kept []".to_string()), "{:?}", printed(&r));
}

#[test]
fn fsync_eio_drops_the_data_and_later_fsyncs_succeed() {
    let cfg = disk_config("eio", "eio", "");
    let eio = json!({ "kind": "fsync_eio", "node": "d", "sync": 3, "at_ns": 0 });
    let r = replay_with(&cfg, json!([eio, crash_at(100)]));
    let out = printed(&r);
    assert!(out.iter().any(|l| l.starts_with("first fsync: ") && l.ends_with("(EIO: true)")), "{out:?}");
    assert!(out.contains(&"cache shows \"data\"".to_string()));
    assert!(out.contains(&"second fsync: <nil>".to_string()));
    assert!(out.contains(&"after crash: \"\\x00\\x00\\x00\\x00\"".to_string()), "{out:?}");
}

#[test]
fn crash_lands_on_exactly_the_named_disk_op() {
    let cfg = disk_config("disk-op", "osync", "");
    let records = |op: u64| -> (u64, String) {
        let r = replay_with(&cfg, json!([{ "kind": "crash", "node": "d", "at_ns": 0, "disk_op": op, "restart_after_ns": 5_000_000 }]));
        let fault = r["events"].as_array().unwrap().iter().find(|e| e["event"] == "fault").unwrap()["fault"].clone();
        assert_eq!(fault["disk_op"], op, "{fault}");
        let line = printed(&r).into_iter().find(|l| l.starts_with("after crash:")).unwrap();
        let n = line.split_whitespace().nth(2).unwrap().parse().unwrap();
        (n, line)
    };
    // Each O_SYNC append is two disk operations (write, then its sync); a
    // crash inside either loses that record, so counts step once per pair.
    let c: Vec<u64> = (20..24).map(|op| records(op).0).collect();
    assert_eq!(c[2], c[0] + 1, "{c:?}");
    assert_eq!(c[3], c[1] + 1, "{c:?}");
    assert!(c[1] == c[0] || c[1] == c[2], "{c:?}");
    assert!(c[0] > 3 && c[3] < 20, "{c:?}");
}

#[test]
fn pause_stops_the_node_for_its_duration() {
    let cfg = disk_config("pause", "pause", "");
    let r = replay_with(&cfg, json!([{ "kind": "pause", "node": "d", "at_ns": 30_000_000, "duration_ns": 200_000_000 }]));
    let line = printed(&r).into_iter().find(|l| l.starts_with("node saw")).unwrap();
    let ms: u64 = line.split_whitespace().nth(2).unwrap().trim_end_matches("ms").parse().unwrap();
    assert!(ms >= 200, "{line}");
    let unpaused = replay_with(&cfg, json!([]));
    let line = printed(&unpaused).into_iter().find(|l| l.starts_with("node saw")).unwrap();
    let ms: u64 = line.split_whitespace().nth(2).unwrap().trim_end_matches("ms").parse().unwrap();
    assert!(ms < 150, "{line}");
}

#[test]
fn clock_skew_changes_the_rate_of_a_nodes_clocks() {
    let cfg = disk_config("skew", "skew", "");
    let r = replay_with(&cfg, json!([{ "kind": "clock_skew", "node": "d", "at_ns": 0, "rate_ppm": 2_000_000, "duration_ns": 1_000_000_000 }]));
    let ev = r["events"].as_array().unwrap().iter().find(|e| e["text"].as_str().is_some_and(|t| t.starts_with("node saw"))).unwrap().clone();
    assert_eq!(ev["text"], "node saw 100ms pass", "the node slept 100ms of its own time");
    assert!(ev["time_ns"].as_u64().unwrap() < 60_000_000, "which took about 50ms of world time: {ev}");
}

#[test]
fn clock_jump_moves_realtime_but_not_monotonic() {
    let cfg = disk_config("jump", "jump", "");
    let r = replay_with(&cfg, json!([{ "kind": "clock_jump", "node": "d", "at_ns": 20_000_000, "delta_ns": -30_000_000_000i64 }]));
    assert!(printed(&r).contains(&"wall clock moved -30s, monotonic 50ms".to_string()), "{:?}", printed(&r));
}

#[test]
fn rate_drawn_faults_are_recorded_and_replay_exactly() {
    let extra = r#""faults": { "crash": { "rate": 20, "restart_after": "1ms-20ms", "during_disk_op": 0.5 }, "torn_writes": true,
        "fsync_eio": { "probability": 0.3 }, "pause": { "rate": 5, "duration": "1ms-10ms" } },"#;
    let cfg = disk_config("rates", "osync", extra);
    let mut seen_kinds = std::collections::BTreeSet::new();
    for seed in 1..=12u64 {
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed.to_string(), "-json"]));
        let faults: Vec<Value> = r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "fault").map(|e| e["fault"].clone()).collect();
        for f in &faults {
            seen_kinds.insert(f["kind"].as_str().unwrap().to_string());
        }
        // The recorded faults, as a schedule, replay the run exactly.
        let again = replay_with(&cfg, Value::Array(faults.clone()));
        let file = cfg.parent().unwrap().join("faults.json");
        let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        doc["seed"] = json!(seed);
        std::fs::write(&file, doc.to_string()).unwrap();
        let again_seeded = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]));
        let _ = again;
        assert_eq!(again_seeded["trace_hash"], r["trace_hash"], "seed {seed}: {faults:?}");
    }
    for kind in ["crash", "fsync_eio", "pause"] {
        assert!(seen_kinds.contains(kind), "{kind} never drawn in 12 seeds: {seen_kinds:?}");
    }
}
