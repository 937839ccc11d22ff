//! A full disk and failing writes on real guests: a Go and a Rust log that
//! handle ENOSPC and EIO (tests/guests/go-fulldisk and rust-fulldisk,
//! `handle`), and the same Go log written carelessly (`ignore`), under a
//! small `disk.capacity`, the `write_error` family and `disk_full` fills;
//! the Go storage overlay's `syscall.Statfs` (tests/guests/go-mmap).
mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn go_log(test: &str, mode: &str, extra: &str) -> PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "5s", {extra} "nodes": [ {{ "name": "d", "go": {{ "dir": "$GUESTS/go-fulldisk" }}, "args": ["-mode", "{mode}"] }} ] }}"#))
}

fn rust_log(test: &str, mode: &str, extra: &str) -> PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "5s", {extra} "nodes": [ {{ "name": "d", "cargo": {{ "dir": "$GUESTS/rust-fulldisk" }}, "args": ["{mode}"] }} ] }}"#))
}

fn replay(cfg: &Path, seed: u64) -> Value {
    json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed.to_string(), "-json"]))
}

fn replay_faults(cfg: &Path, name: &str, faults: Value) -> Value {
    let file = cfg.parent().unwrap().join("faults.json");
    std::fs::write(&file, json!({ "version": 1, "config": name, "seed": 1, "faults": faults }).to_string()).unwrap();
    json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]))
}

fn events<'a>(r: &'a Value, kind: &str) -> Vec<&'a Value> {
    r["events"].as_array().unwrap().iter().filter(|e| e["event"] == kind).collect()
}

fn printed(r: &Value) -> Vec<String> {
    events(r, "output").iter().filter(|e| e["stream"] == "stdout").map(|e| e["text"].as_str().unwrap().to_string()).collect()
}

/// The faults a replay applied, as its schedule records them.
fn applied(r: &Value) -> Vec<Value> {
    events(r, "fault").iter().map(|e| e["fault"].clone()).collect()
}

fn acked(r: &Value) -> usize {
    printed(r).iter().filter(|l| l.starts_with("acked ")).count()
}

const SMALL: &str = r#""disk": { "capacity": "48KiB" },"#;

#[test]
fn a_small_disk_gives_short_writes_then_enospc_and_a_log_that_handles_them_carries_on() {
    // 400 records of 108 to 507 bytes need about 120 KiB: on 48 KiB the log
    // must retire old segments to go on, and it does, in Go and in Rust.
    for (lang, cfg) in [("go", go_log("small-go", "handle", SMALL)), ("rust", rust_log("small-rust", "handle", SMALL))] {
        let r = replay(&cfg, 1);
        assert_eq!(r["verdict"], "pass", "{lang}: {}", r["failure"]);
        assert_eq!(acked(&r), 400, "{lang}");
        let lines = printed(&r);
        assert!(lines.iter().any(|l| l == "retired seg 1") && lines.iter().any(|l| l == "freed"), "{lang}: {lines:?}");
        let refused = events(&r, "no_space");
        assert!(!refused.is_empty(), "{lang}: no write was refused");
        for e in &refused {
            assert!(e["path"].as_str().unwrap().starts_with("/data/seg-") && e["op"] == "write", "{lang}: {e}");
            assert!(e["done"].as_u64().unwrap_or(0) < e["asked"].as_u64().unwrap(), "{lang}: {e}");
        }
        // A short write (some bytes fit), and a refusal (none did): both as Linux does.
        assert!(refused.iter().any(|e| e["done"].as_u64().is_some_and(|d| d > 0)), "{lang}: no short write: {refused:?}");
        // Go's File.Write goes on after a short write and meets ENOSPC; the
        // Rust log takes the short count as a full disk and writes no more.
        if lang == "go" {
            assert!(refused.iter().any(|e| e.get("done").is_none() && e["free"].as_u64().unwrap() < 4096), "{lang}: no ENOSPC: {refused:?}");
        }
    }
}

#[test]
fn the_careless_log_is_caught_losing_an_acknowledged_record() {
    let cfg = go_log("small-ignore", "ignore", SMALL);
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3", "-json"]);
    let r = json(&out);
    assert_eq!(r["failed"], 3, "every seed fails: {}", out.stdout);
    let text = r["failures"][0]["nodes"][0]["message"].as_str().unwrap();
    assert!(text.contains("acked record") || text.contains("is corrupt"), "{text}");
    // The same guest with room to spare keeps every record.
    let roomy = replay(&go_log("roomy-ignore", "ignore", ""), 1);
    assert_eq!((roomy["verdict"].as_str(), acked(&roomy)), (Some("pass"), 400), "{}", roomy["failure"]);
}

#[test]
fn write_errors_are_drawn_per_write_recorded_with_path_and_replayed_exactly() {
    let faults = r#""faults": { "write_error": { "probability": 0.05, "path_prefix": "/data/seg-" } },"#;
    let cfg = go_log("write-error", "handle", faults);
    let r = replay(&cfg, 1);
    assert_eq!(r["verdict"], "pass", "{}", r["failure"]);
    let all = applied(&r);
    let applied: Vec<&Value> = all.iter().filter(|f| f["kind"] == "write_error").collect();
    assert!(applied.len() >= 5, "{applied:?}");
    let errnos: std::collections::BTreeSet<&str> = applied.iter().map(|f| f["errno"].as_str().unwrap()).collect();
    assert_eq!(errnos, ["EIO", "ENOSPC"].into(), "both errors are drawn by default");
    for f in &applied {
        assert!(f["path"].as_str().unwrap().starts_with("/data/seg-") && f["write"].as_u64().unwrap() >= 1, "{f}");
    }
    let lines = printed(&r);
    assert!(lines.iter().any(|l| l == "write error EIO, retrying"), "{lines:?}");
    // The schedule replays the same run, fault for fault.
    let again = replay_faults(&cfg, "write-error", Value::Array(all.clone()));
    assert_eq!(again["trace_hash"], r["trace_hash"]);
    // With one write error at a write number, exactly that write fails.
    let one = replay_faults(&cfg, "write-error", json!([{ "kind": "write_error", "node": "d", "write": 30, "at_ns": 0, "errno": "EIO" }]));
    let shown: Vec<&Value> = events(&one, "fault");
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert_eq!(shown[0]["fault"]["write"], 30);
    assert!(shown[0]["fault"]["path"].as_str().unwrap().starts_with("/data/seg-"), "{}", shown[0]);
    assert_eq!(printed(&one).iter().filter(|l| *l == "write error EIO, retrying").count(), 1);
}

#[test]
fn a_write_error_that_the_careless_log_ignores_is_found_shrunk_and_named_by_cause() {
    let faults = r#""faults": { "write_error": { "probability": 0.02, "errors": ["ENOSPC"] }, "pause": { "rate": 5, "duration": "1ms-5ms" } },"#;
    let cfg = go_log("write-error-ignore", "ignore", faults);
    let c = cfg.to_str().unwrap();
    let out = seedfall(&["run", "-c", c, "-seeds", "1-10", "-json"]);
    let sweep = json(&out);
    let seed = sweep["failures"][0]["seed"].as_u64().unwrap_or_else(|| panic!("an ignored refused write loses an acked record in some seed: {}", out.stdout)).to_string();
    let shrink = seedfall(&["shrink", "-c", c, "-seed", &seed]);
    let file = shrink.stdout.lines().find_map(|l| l.strip_prefix("wrote ")).unwrap_or_else(|| panic!("{}{}", shrink.stdout, shrink.stderr)).to_string();
    let shrunk: Value = serde_json::from_str(&std::fs::read_to_string(repo().join(file)).unwrap()).unwrap();
    let left = shrunk["faults"].as_array().unwrap();
    assert!(!left.is_empty() && left.iter().all(|f| f["kind"] == "write_error"), "shrink keeps only write errors: {left:?}");
    let cause = seedfall(&["cause", "-c", c, "-seed", &seed]);
    let necessary = cause.stdout.lines().find(|l| l.trim_start().starts_with("necessary")).unwrap_or_else(|| panic!("{}{}", cause.stdout, cause.stderr));
    assert!(necessary.contains("write error on d (write #") && necessary.contains("refused with ENOSPC"), "{necessary}");
}

#[test]
fn a_fill_up_refuses_growth_for_its_duration_and_a_restarted_node_meets_it_too() {
    let cfg = go_log("disk-full", "handle", "");
    let full = json!({ "kind": "disk_full", "node": "d", "at_ns": 100_000_000u64, "duration_ns": 30_000_000u64 });
    let r = replay_faults(&cfg, "disk-full", json!([full]));
    assert_eq!(r["verdict"], "pass", "{}", r["failure"]);
    assert_eq!(acked(&r), 400);
    let refused = events(&r, "no_space");
    assert!(!refused.is_empty());
    for e in &refused {
        let t = e["time_ns"].as_u64().unwrap();
        assert!((100_000_000..130_000_000).contains(&t) && e["full"] == true && e["free"] == 0, "{e}");
    }
    // Drawn from a rate, it is in the schedule, and shrink can halve it.
    let drawn = go_log("disk-full-rate", "handle", r#""faults": { "disk_full": { "rate": 2, "duration": "5ms-20ms" } },"#);
    let r = replay(&drawn, 1);
    assert!(applied(&r).iter().any(|f| f["kind"] == "disk_full"), "{:?}", applied(&r));
    // A crash during a fill-up: the restarted node meets the full disk.
    let crash = json!({ "kind": "crash", "node": "d", "at_ns": 105_000_000u64, "restart_after_ns": 5_000_000u64 });
    let full = json!({ "kind": "disk_full", "node": "d", "at_ns": 100_000_000u64, "duration_ns": 200_000_000u64 });
    let r = replay_faults(&cfg, "disk-full", json!([full, crash]));
    assert!(events(&r, "no_space").iter().any(|e| e["time_ns"].as_u64().unwrap() > 110_000_000), "after the restart the disk is still full");
}

#[test]
fn statfs_reports_the_capacity_and_what_is_free() {
    let cfg = config("statfs", r#"{ "name": "statfs", "duration": "1s", "disk": { "capacity": "1MiB" },
        "nodes": [ { "name": "m", "go": { "dir": "$GUESTS/go-mmap", "storage": true }, "args": ["-mode", "statfs"] } ] }"#);
    let full = json!({ "kind": "disk_full", "node": "m", "at_ns": 50_000_000u64, "duration_ns": 500_000_000u64 });
    let r = replay_faults(&cfg, "statfs", json!([full]));
    assert_eq!(r["verdict"], "pass", "{}", r["failure"]);
    // 1 MiB is 256 blocks of 4 KiB; the empty disk holds only / (nothing
    // counted) and 64 KiB more is 16 blocks and an inode.
    assert_eq!(
        printed(&r),
        [
            "statfs empty: bsize=4096 blocks=256 free=256 avail=256",
            "statfs after 64KiB: bsize=4096 blocks=256 free=239 avail=239",
            "statfs later: bsize=4096 blocks=256 free=0 avail=0",
        ]
    );
}

#[test]
fn a_capacity_the_seeded_files_do_not_fit_fails_every_run_naming_the_field() {
    let dir = scratch("seed-too-big");
    std::fs::write(dir.join("big.bin"), vec![1u8; 8192]).unwrap();
    let cfg = dir.join("seedfall.json");
    let body = r#"{ "name": "seedbig", "duration": "1s", "nodes": [ { "name": "d", "go": { "dir": "$GUESTS/go-fulldisk" }, "args": ["-mode", "handle"],
        "disk": { "capacity": "4KiB", "files": { "/data/big.bin": "big.bin" } } } ] }"#;
    std::fs::write(&cfg, body.replace("$GUESTS", &guests().display().to_string())).unwrap();
    let r = replay(&cfg, 1);
    assert_eq!(r["verdict"], "fail");
    let message = r["failure"]["nodes"][0]["message"].as_str().unwrap();
    assert!(message.contains("more than nodes[0].disk.capacity (4096 bytes)"), "{message}");
}
