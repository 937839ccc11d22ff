//! `inspect -at` / `-at-event`: standing inside a run, on real guests.
//! kvlog seed 2 crashes with an acknowledged write still in the cache, and
//! httpkv's nodes hold sockets to each other.
mod common;
use common::*;
use serde_json::Value;

const KVLOG: &str = "examples/kvlog/seedfall.json";

fn events(cfg: &str, seed: &str) -> Vec<Value> {
    let out = seedfall(&["inspect", "-c", cfg, "-seed", seed, "-json"]);
    out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn moment(cfg: &str, seed: &str, at: &[&str]) -> Value {
    let mut args = vec!["inspect", "-c", cfg, "-seed", seed, "-json"];
    args.extend_from_slice(at);
    let out = seedfall(&args);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one moment line: {}", out.stdout);
    let m: Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(m["event"], "moment");
    m
}

fn entry<'a>(m: &'a Value, node: &str, path: &str) -> &'a Value {
    let n = m["nodes"].as_array().unwrap().iter().find(|n| n["node"] == node).unwrap_or_else(|| panic!("node {node} in {m}"));
    n["disk"].as_array().unwrap().iter().find(|e| e["path"] == path).unwrap_or_else(|| panic!("{path} on {node}'s disk: {}", n["disk"]))
}

#[test]
fn before_the_crash_the_acknowledged_write_is_only_cached_and_after_it_is_gone() {
    let evs = events(KVLOG, "2");
    let crash = evs.iter().position(|e| e["event"] == "crash").expect("seed 2 crashes kv");
    let lost_bytes = evs[crash]["lost"].as_array().unwrap().iter().find(|l| l["loss"] == "size_reverted").expect("the crash cuts kv.log back");
    let (from, to) = (lost_bytes["from"].as_u64().unwrap(), lost_bytes["to"].as_u64().unwrap());

    // Just before the crash's step: kv is up, holds kv.log open, and the
    // log's tail is in the cache only.
    let fault = evs.iter().position(|e| e["event"] == "fault").unwrap();
    let before = moment(KVLOG, "2", &["-at-event", &(fault - 1).to_string()]);
    let kv = &before["nodes"][0];
    assert_eq!(kv["node"], "kv");
    assert!(kv["status"] == "waiting" || kv["status"] == "running", "{kv}");
    assert!(kv["files"].as_array().unwrap().iter().any(|f| f["path"] == "/data/kv.log" && f["mode"] == "rw"), "{kv}");
    let log = entry(&before, "kv", "/data/kv.log");
    assert_eq!(log["state"], "dirty", "{log}");
    assert_eq!(log["size"].as_u64(), Some(from));
    assert_eq!(log["durable_size"].as_u64(), Some(to));
    assert!(log["dirty_sectors"].as_u64().unwrap() >= 1);

    // Right after the crash: kv is down and holds nothing; the disk is what
    // the medium held, durable throughout.
    let after = moment(KVLOG, "2", &["-at-event", &crash.to_string()]);
    assert!(after["events_from"].as_u64().unwrap() <= crash as u64 && (crash as u64) < after["events_to"].as_u64().unwrap(), "{after}");
    let kv = &after["nodes"][0];
    assert_eq!(kv["status"], "crashed");
    assert_eq!(kv["crashes"], 1);
    assert!(kv["files"].as_array().unwrap().is_empty() && kv["sockets"].as_array().unwrap().is_empty(), "{kv}");
    let log = entry(&after, "kv", "/data/kv.log");
    assert_eq!((log["state"].as_str(), log["size"].as_u64()), (Some("durable"), Some(to)), "{log}");
    assert_eq!(after["span"].as_array().unwrap().iter().filter(|e| e["event"] == "crash").count(), 1);

    // Asking for a moment changes nothing the guest observes.
    let run = json(&seedfall(&["run", "-c", KVLOG, "-seeds", "2", "-json", "-hashes"]));
    assert_eq!(run["trace_hashes"][0][1], after["trace_hash"]);
    assert_eq!(run["trace_hashes"][0][1], before["trace_hash"]);
    // The same moment twice is the same JSON.
    assert_eq!(moment(KVLOG, "2", &["-at-event", &crash.to_string()]), after);
}

#[test]
fn stepping_moment_by_moment_covers_every_event_once() {
    let evs = events(KVLOG, "2");
    let total = evs.len();
    let mut at = 0;
    let mut seen = 0;
    while at < total {
        let m = moment(KVLOG, "2", &["-at-event", &at.to_string()]);
        let (from, to) = (m["events_from"].as_u64().unwrap() as usize, m["events_to"].as_u64().unwrap() as usize);
        if m["end"] == true {
            // The run's end: every event left is part of it or after it.
            assert!(from <= at, "{m}");
            break;
        }
        assert!(from <= at && at < to, "event {at} inside {from}..{to}");
        assert_eq!(from, seen, "no event skipped or shown twice");
        seen = to;
        at = to;
    }
    assert!(seen > total / 2, "the walk got somewhere: {seen} of {total}");
    // The end, asked for past the last event, says so and offers no branch.
    let end = moment(KVLOG, "2", &["-at-event", "100000"]);
    assert_eq!(end["end"], true);
    assert!(end["branch"].is_null() && end["branch_why_not"].as_str().unwrap().contains("ended"), "{end}");
}

#[test]
fn a_moment_shows_sockets_and_peers_and_branches_new_runs_from_it() {
    let cfg = "examples/httpkv/seedfall.json";
    let m = moment(cfg, "1", &["-at", "300ms"]);
    assert!(m["time_ns"].as_u64().unwrap() >= 300_000_000);
    let primary = m["nodes"].as_array().unwrap().iter().find(|n| n["node"] == "primary").unwrap();
    let socks = primary["sockets"].as_array().unwrap();
    assert!(socks.iter().any(|s| s["state"] == "listening" && s["local"].as_str().unwrap().ends_with(":8080")), "{primary}");
    assert!(socks.iter().any(|s| s["state"] == "connected" && s["peer"].as_str().unwrap().starts_with("backup:")), "{primary}");
    // Branching from it: every seed shares seed 1's run up to that time.
    let branch = &m["branch"];
    assert_eq!(branch["prefix_seed"], 1);
    let from = branch["from"].as_str().unwrap();
    let out = seedfall(&["run", "-c", cfg, "-from", from, "-prefix-seed", "1", "-seeds", "1-4", "-json", "-hashes"]);
    assert!(out.code == 0 || out.code == 1, "{}", out.stderr);
    assert_eq!(json(&out)["runs"], 4);
    // The text form says the same for a person, with the command to branch.
    let text = seedfall(&["inspect", "-c", cfg, "-seed", "1", "-at", "300ms"]);
    assert!(text.stdout.contains("primary: ") && text.stdout.contains("socket listening"), "{}", text.stdout);
    assert!(text.stdout.contains(&format!("branch from here: seedfall run -c {cfg} -from {from} -prefix-seed 1")), "{}", text.stdout);
}

#[test]
fn a_bad_moment_is_refused_with_what_was_expected() {
    let bad = seedfall(&["inspect", "-c", KVLOG, "-seed", "2", "-at", "soon"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("-at: expected a virtual time such as 1.5s"), "{}", bad.stderr);
    let both = seedfall(&["inspect", "-c", KVLOG, "-seed", "2", "-at", "1s", "-at-event", "3"]);
    assert_eq!(both.code, 2, "{}", both.stderr);
    // A sweep's failure folder is the seed's own run: it branches. A
    // schedule with other faults (here: none at all) is not: no branch, and why.
    let evs = events(KVLOG, "2");
    let mid = (evs.len() / 2).to_string();
    let own = json(&seedfall(&["run", "-c", KVLOG, "-seeds", "2", "-json"]));
    let folder = repo().join(own["failures"][0]["folder"].as_str().unwrap());
    let m = moment(KVLOG, "2", &["-faults", folder.join("faults.json").to_str().unwrap(), "-at-event", &mid]);
    assert_eq!(m["branch"]["prefix_seed"], 2, "{m}");
    let dir = scratch("moment-faults");
    let faults = dir.join("faults.json");
    std::fs::write(&faults, format!(r#"{{ "version": 1, "config": "{}", "seed": 2, "faults": [] }}"#, repo().join(KVLOG).display())).unwrap();
    let m = moment(KVLOG, "2", &["-faults", faults.to_str().unwrap(), "-at-event", &mid]);
    assert!(m["branch"].is_null() && m["branch_why_not"].as_str().unwrap().contains("not its seed's own draw"), "{m}");
}
