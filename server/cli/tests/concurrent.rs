//! Several seedfall processes on one workspace at once
//! (docs/failures.md#several-at-once): two sweeps of one config over
//! different seeds, side by side, each keep every folder they print as
//! saved, and the failures index names both sweeps' failing seeds with
//! folders that exist.
mod common;
use common::*;
use std::path::Path;
use std::process::{Command, Stdio};

fn sweep(cfg: &Path, seeds: &str) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(["run", "-c", cfg.to_str().unwrap(), "-seeds", seeds, "-j", "1"])
        .current_dir(cfg.parent().unwrap())
        .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The folders a sweep's text says it saved.
fn saved(text: &str) -> Vec<String> {
    text.lines().filter_map(|l| l.trim().strip_prefix("saved in ")).map(|p| p.trim().to_string()).collect()
}

#[test]
fn two_sweeps_side_by_side_keep_what_each_printed_and_both_are_indexed() {
    // examples/kvlog fails in about a third of its seeds.
    let cfg = config("concurrent", &format!(r#"{{ "version": 1, "name": "kvlog", "duration": "3s", "nodes": [ {{ "name": "kv", "go": {{ "dir": "{}" }} }} ],
        "faults": {{ "crash": {{ "rate": 2, "restart_after": "1ms-10ms", "during_disk_op": 0.3 }}, "torn_writes": true }} }}"#, repo().join("examples/kvlog").display()));
    // Build once, so both start sweeping at once.
    let warm = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1"]);
    assert!(warm.code <= 1, "{}", warm.stderr);
    let dir = cfg.parent().unwrap();
    let _ = std::fs::remove_dir_all(dir.join(".seedfall/failures"));
    let _ = std::fs::remove_file(dir.join(".seedfall/failures-index.json"));
    for round in 0..2 {
        let (a, b) = (sweep(&cfg, "1-150"), sweep(&cfg, "151-300"));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let mut printed = Vec::new();
        for out in [&a, &b] {
            assert_eq!(out.status.code(), Some(1), "both find failures:\n{}", String::from_utf8_lossy(&out.stderr));
            printed.extend(saved(&String::from_utf8_lossy(&out.stdout)));
        }
        assert!(printed.len() >= 2, "round {round}: each saved folders: {printed:?}");
        for folder in &printed {
            let path = dir.join(folder);
            assert!(path.join("faults.json").is_file(), "round {round}: printed as saved, then gone: {folder}");
        }
        let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(".seedfall/failures-index.json")).unwrap()).unwrap();
        let ranges: Vec<&str> = index["ranges"].as_array().unwrap().iter().map(|r| r["seeds"].as_str().unwrap()).collect();
        assert_eq!(ranges, ["1-150", "151-300"], "round {round}: {index}");
        let seeds: Vec<u64> = index["findings"].as_array().unwrap().iter().flat_map(|f| f["seeds"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap())).collect();
        assert!(seeds.iter().any(|s| *s <= 150) && seeds.iter().any(|s| *s > 150), "round {round}: both sweeps' seeds: {seeds:?}");
        for f in index["findings"].as_array().unwrap() {
            let folders = f["folders"].as_array().unwrap();
            assert!(!folders.is_empty(), "round {round}: a finding without a folder: {f}");
            for folder in folders {
                assert!(dir.join(".seedfall/failures").join(folder.as_str().unwrap()).join("faults.json").is_file(), "round {round}: the index names a folder that is gone: {folder}");
            }
        }
    }
    // A later sweep of seeds 1-150 alone replaces that range, keeps the other.
    let again = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-150"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    let index: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(".seedfall/failures-index.json")).unwrap()).unwrap();
    assert_eq!(index["seeds"], "1-150, 151-300", "{index}");
    assert!(!dir.join(".seedfall/live").read_dir().unwrap().any(|e| e.is_ok()), "no claim outlives its sweep");
}
