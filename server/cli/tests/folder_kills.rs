//! Replacing a failure folder is safe at every step: a seedfall killed
//! (`kill -9`) at any point of writing a failure folder over an existing one
//! leaves a whole folder under the final name, with the work tools had added
//! to it (shrink's `faults.shrunk.json`), and `replay -faults` works on it.
//! The kill comes from a fault-injection hook (`SEEDFALL_TEST_KILL_AT`,
//! artifacts.rs), not from timing luck.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// examples/ledger in a scratch folder: seed 6 overdraws an account.
fn ledger(test: &str) -> PathBuf {
    config(test, &format!(r#"{{ "version": 1, "name": "ledger", "duration": "2s", "nodes": [ {{ "name": "bank", "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/ledger").display()))
}

fn killed_at(cfg: &Path, point: &str) -> std::process::ExitStatus {
    Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(["run", "-c", cfg.to_str().unwrap(), "-seeds", "6", "-j", "1"])
        .env(
            "SEEDFALL_CACHE_DIR",
            repo().join("target/seedfall-test-cache"),
        )
        .env("SEEDFALL_TEST_KILL_AT", point)
        .output()
        .expect("run seedfall")
        .status
}

fn folder(cfg: &Path) -> PathBuf {
    let root = cfg.parent().unwrap().join(".seedfall/failures");
    let found: Vec<PathBuf> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("ledger-seed-6-")).collect();
    assert_eq!(found.len(), 1, "one folder for seed 6: {found:?}");
    found[0].clone()
}

#[test]
fn a_kill_at_any_step_of_replacing_a_failure_folder_leaves_a_whole_one() {
    use std::os::unix::process::ExitStatusExt;
    let cfg = ledger("folder-kills");
    let first = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "6"]);
    assert_eq!(first.code, 1, "{}", first.stderr);
    let dir = folder(&cfg);
    // Work a tool did in the folder, which a rewrite must carry over.
    std::fs::copy(dir.join("faults.json"), dir.join("faults.shrunk.json")).unwrap();
    for point in ["written", "carried", "exchanged"] {
        let status = killed_at(&cfg, point);
        assert_eq!(status.signal(), Some(9), "{point}: the hook killed it ({status:?})");
        let dir = folder(&cfg);
        for file in ["faults.json", "summary.json", "trace.jsonl", "bank.stdout", "bank.stderr", "faults.shrunk.json"] {
            assert!(dir.join(file).is_file(), "killed at {point}: {} lacks {file}", dir.display());
        }
        let replay = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "6", "-faults", dir.join("faults.json").to_str().unwrap()]);
        assert_eq!(replay.code, 1, "killed at {point}: the folder replays its failure\n{}", replay.stderr);
    }
    // The next run clears what the killed ones left beside it.
    let again = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "6"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    let hidden: Vec<String> = std::fs::read_dir(cfg.parent().unwrap().join(".seedfall/failures")).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.starts_with('.')).collect();
    assert!(hidden.is_empty(), "leftovers of killed writers: {hidden:?}");
    assert!(folder(&cfg).join("faults.shrunk.json").is_file());
}

/// The folders the failures index names.
fn named(cfg: &Path) -> Vec<String> {
    let index = cfg.parent().unwrap().join(".seedfall/failures-index.json");
    let Ok(text) = std::fs::read_to_string(index) else {
        return Vec::new();
    };
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|f| {
            f["folders"]
                .as_array()
                .unwrap()
                .iter()
                .map(|n| n.as_str().unwrap().to_string())
        })
        .collect()
}

/// A sweep in which a seed that failed before passes: killed at that
/// moment, it leaves the index naming only folders that are there (it
/// removed the folder at once, and the index named it until the sweep's
/// end); finished, the folder and the index are gone.
#[test]
fn a_sweep_killed_mid_way_leaves_no_index_entry_without_its_folder() {
    use std::os::unix::process::ExitStatusExt;
    let cfg = ledger("sweep-kills");
    let first = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "6"]);
    assert_eq!(first.code, 1, "{}", first.stderr);
    let before = named(&cfg);
    assert_eq!(before.len(), 1, "{before:?}");
    // Seed 6 passes when the run ends before the overdraft.
    let text = std::fs::read_to_string(&cfg)
        .unwrap()
        .replace(r#""duration": "2s""#, r#""duration": "1ms""#);
    std::fs::write(&cfg, text).unwrap();
    let status = killed_at(&cfg, "passed");
    assert_eq!(status.signal(), Some(9), "the hook killed it ({status:?})");
    let root = cfg.parent().unwrap().join(".seedfall/failures");
    for name in named(&cfg) {
        assert!(
            root.join(&name).join("summary.json").is_file(),
            "the index names {name}, which a killed sweep removed"
        );
    }
    let again = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "6"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(
        named(&cfg).is_empty() && !root.join(&before[0]).exists(),
        "a passing seed's folder and index entry go at the sweep's end"
    );
}
