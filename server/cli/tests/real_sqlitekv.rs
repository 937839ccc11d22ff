//! examples/sqlitekv on the real SQLite (rusqlite's bundled C library built
//! for wasm32-wasip1 by clang 14 against wasi-libc): the false-alarm check
//! of the disk models. In WAL mode with `synchronous=FULL` its acknowledged
//! inserts survive crashes and torn writes under ext4 and under strict POSIX
//! (where it relies on SQLite's directory fsync); in rollback-journal mode
//! with `synchronous=FULL` the commit's unlink of the journal is not durable
//! and a crash rolls the last acknowledged insert back, under both models,
//! as SQLite documents (`EXTRA` fixes it); and the lock directory of the
//! WASI default VFS outlives a crash.
mod common;
use common::*;

const CHECK: &str = "acknowledged inserts survive crashes";

fn property<'a>(out: &'a serde_json::Value, message: &str) -> &'a serde_json::Value {
    out["properties"].as_array().unwrap().iter().find(|p| p["message"] == message).unwrap_or_else(|| panic!("no property {message:?}: {out}"))
}

/// A sweep of `runs` seeds that must pass, with the checks run after a
/// restart in at least nine seeds of ten.
fn passes(config: &str, runs: u64) {
    let out = seedfall(&["run", "-c", config, "-seeds", &format!("1-{runs}"), "-json"]);
    assert_eq!(out.code, 0, "{config}: {}\n{}", out.stdout, out.stderr);
    let out = json(&out);
    assert_eq!(out["failed"], 0, "{out}");
    for message in [CHECK, "the database passes integrity_check", "every insert committed"] {
        let p = property(&out, message);
        assert!(p["runs_hit"].as_u64().unwrap() * 10 >= runs * 9, "{config}: {message:?} ran in most seeds: {p}");
        assert_eq!(p["runs_false"], 0, "{p}");
    }
}

#[test]
fn wal_inserts_survive_under_ext4() {
    passes("examples/sqlitekv/seedfall.json", 100);
}

#[test]
fn wal_inserts_survive_under_strict_posix_thanks_to_the_directory_fsync() {
    passes("examples/sqlitekv/seedfall.posix.json", 100);
    // Not vacuous: SQLite fsyncs the folder after creating the -wal file,
    // and without that fsync strict POSIX loses the file's name.
    let out = json(&seedfall(&["mutate", "-c", "examples/sqlitekv/seedfall.posix.json", "-seeds", "1-30", "-json"]));
    assert!(out["baseline_failed_seeds"].as_array().unwrap().is_empty(), "{out}");
    let m = out["mutations"].as_array().unwrap();
    let dir = m.iter().find(|x| x["mutation"] == "DirFsyncIgnored").unwrap_or_else(|| panic!("{out}"));
    assert_eq!(dir["killed"], true, "{dir}");
}

#[test]
fn rollback_journal_with_synchronous_full_loses_the_last_commit_on_ext4_and_xfs() {
    let cfg = "examples/sqlitekv/seedfall.delete.json";
    let out = seedfall(&["run", "-c", cfg, "-seeds", "1-40", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() >= 10, "{} of 40 seeds fail", failures.len());
    for f in failures {
        assert_eq!(f["nodes"][0]["message"], CHECK, "{f}");
        // ext4 and xfs commit the journal's unlink only with a later
        // journal commit; btrfs logs the new journal's name with its fsync,
        // which on some schedules makes the old unlink durable too.
        let label = f["model"]["label"].as_str().unwrap_or_default();
        assert!(label == "holds on ext4, xfs and btrfs" || label == "holds on ext4 and xfs; not on btrfs", "{f}");
        // Exactly the last acknowledged insert is gone: a rolled-back commit.
        let details: serde_json::Value = serde_json::from_str(f["nodes"][0]["details"].as_str().unwrap()).unwrap();
        let acked: u64 = details["acknowledged"].as_str().unwrap().parse().unwrap();
        let found: u64 = details["found"].as_str().unwrap().parse().unwrap();
        assert_eq!(found + 1, acked, "{f}");
    }
    // What the fatal crash lost is the commit's unlink of the journal.
    let seed = failures[0]["seed"].to_string();
    let shrunk = seedfall(&["shrink", "-c", cfg, "-seed", &seed]);
    assert_eq!(shrunk.code, 0, "{}\n{}", shrunk.stdout, shrunk.stderr);
    let file = shrunk.stdout.lines().find_map(|l| l.strip_prefix("wrote ")).unwrap_or_else(|| panic!("{}", shrunk.stdout)).trim().to_string();
    let inspect = seedfall(&["inspect", "-c", cfg, "-faults", &file, "-kind", "crash"]);
    let last = inspect.stdout.lines().filter(|l| l.contains(" crash ")).last().unwrap_or_else(|| panic!("{}", inspect.stdout));
    assert!(last.contains("unlink undone: /data/kv.db-journal is back"), "{}", inspect.stdout);

    // synchronous=EXTRA also fsyncs the folder after that unlink.
    passes("examples/sqlitekv/seedfall.extra.json", 100);
}

#[test]
fn the_dotfile_lock_outlives_a_crash() {
    let out = seedfall(&["replay", "-c", "examples/sqlitekv/seedfall.dotlock.json", "-faults", "examples/sqlitekv/dotlock.faults.json", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    assert_eq!(out["verdict"], "fail", "{}", out["failure"]);
    // SQLite waited out rusqlite's 5 s busy timeout on a lock no one holds.
    let node = &out["failure"]["nodes"][0];
    assert_eq!(node["kind"], "panic", "{node}");
    assert_eq!(node["message"], "PRAGMA journal_mode=delete: database is locked", "{node}");
    assert!(out["failure"]["time_ns"].as_u64().unwrap() > 5_000_000_000, "{}", out["failure"]);
}
