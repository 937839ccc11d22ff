//! examples/raftkv: a 3-node hashicorp/raft key-value store on raft-boltdb,
//! over the simulated network, under crashes and partitions, checked for
//! linearizability by porcupine through the Go SDK's `history` package.
//! Followers answering reads from their own state (seedfall.broken.json)
//! fail the check; reads behind a barrier on the leader (seedfall.json) pass
//! it, in every run of the sweep.
mod common;
use common::*;

const CHECK: &str = "history is linearizable";

#[test]
fn stale_reads_are_not_linearizable_and_a_failure_replays() {
    let out = seedfall(&["run", "-c", "examples/raftkv/seedfall.broken.json", "-seeds", "1-10", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let failures = out["failures"].as_array().unwrap();
    assert!(failures.len() >= 3, "{} of 10 seeds fail: {}", failures.len(), out["failures"]);
    for f in failures {
        let node = &f["nodes"][0];
        assert_eq!(node["message"], CHECK, "{f}");
        assert_eq!(node["node"], "client", "{f}");
        // porcupine's verdict and the operation it could not place.
        let details = node["details"].to_string();
        assert!(details.contains("Illegal") && details.contains("first unexplained") && details.contains("get("), "{details}");
    }
    let first = failures.iter().find(|f| f["folder"].is_string()).expect("a kept folder");
    let faults = repo().join(first["folder"].as_str().unwrap()).join("faults.json");
    let replay = json(&seedfall(&["replay", "-c", "examples/raftkv/seedfall.broken.json", "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], first["trace_hash"]);
}

#[test]
fn reads_behind_a_barrier_on_the_leader_are_linearizable() {
    let seeds = 24;
    let out = seedfall(&["run", "-c", "examples/raftkv/seedfall.json", "-seeds", &format!("1-{seeds}"), "-json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let out = json(&out);
    let props = out["properties"].as_array().unwrap();
    let check = props.iter().find(|p| p["message"] == CHECK).unwrap_or_else(|| panic!("{props:?}"));
    assert_eq!(check["runs_hit"], seeds, "the check ran at the end of every run: {check}");
    assert_eq!(check["runs_true"], seeds, "{check}");
    // The faults bit: writes were left pending (timeouts, crashed leaders)
    // and the check had to place them.
    let pending = props.iter().find(|p| p["message"] == "a write's outcome is unknown").unwrap();
    assert!(pending["runs_hit"].as_u64().unwrap() >= seeds / 2, "{pending}");
}

/// The settled cluster (300 keys loaded, then setup complete, then the
/// faults): a sweep from one snapshot after setup finds the stale read, and
/// its failure replays without a snapshot; the correct cluster passes there.
#[test]
fn after_setup_a_sweep_from_one_snapshot_finds_the_stale_read() {
    let broken = "examples/raftkv/seedfall.settled-broken.json";
    let out = seedfall(&["run", "-c", broken, "-seeds", "1-24", "-from", "setup", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("snapshots: 1 taken") && out.stderr.contains("24 runs continued from one"), "{}", out.stderr);
    let doc = json(&out);
    let failures = doc["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "stale reads after setup: {doc}");
    for f in failures {
        assert_eq!(f["nodes"][0]["message"], CHECK, "{f}");
        assert!(f["time_ns"].as_u64().unwrap() > 5_000_000_000, "after the settle: {f}");
    }
    let first = failures.iter().find(|f| f["folder"].is_string()).expect("a kept folder");
    let faults = repo().join(first["folder"].as_str().unwrap()).join("faults.json");
    let replay = json(&seedfall(&["replay", "-c", broken, "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], first["trace_hash"], "replays from scratch");
    let ok = json(&seedfall(&["run", "-c", "examples/raftkv/seedfall.settled.json", "-seeds", "1-24", "-from", "setup", "-json"]));
    assert_eq!(ok["failed"], 0, "{ok}");
}
