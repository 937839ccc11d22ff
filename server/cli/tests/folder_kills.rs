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
        .args(["run", "-c", cfg.to_str().unwrap(), "-seeds", "6"])
        .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
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
