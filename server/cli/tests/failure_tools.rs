//! shrink, inspect, pin and cause on real failures (kvlog with many faults).
mod common;
use common::*;
use serde_json::Value;

/// kvlog's buggy build under heavy, mixed faults: failures carry many faults.
fn busy_kvlog(test: &str) -> std::path::PathBuf {
    let dir = scratch(test);
    let cfg = dir.join("seedfall.json");
    let body = format!(
        r#"{{ "version": 1, "name": "kvmany", "duration": "3s", "nodes": [ {{ "name": "kv", "go": {{ "dir": "{}" }} }} ],
  "faults": {{ "crash": {{ "rate": 6, "restart_after": "5ms-50ms", "during_disk_op": 0.5 }}, "torn_writes": true,
              "pause": {{ "rate": 5, "duration": "1ms-20ms" }}, "clock_skew": {{ "rate": 3, "duration": "10ms-100ms" }} }} }}"#,
        repo().join("examples/kvlog").display()
    );
    std::fs::write(&cfg, body).unwrap();
    cfg
}

fn first_failure(cfg: &std::path::Path) -> (u64, std::path::PathBuf, Value) {
    let out = json(&seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-30", "-json", "-keep-failures", "100"]));
    let f = out["failures"].as_array().unwrap().iter().find(|f| {
        let folder = repo().join(f["folder"].as_str().unwrap());
        let s: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("faults.json")).unwrap()).unwrap();
        s["faults"].as_array().unwrap().len() >= 4
    });
    let f = f.expect("a failure with several faults").clone();
    (f["seed"].as_u64().unwrap(), repo().join(f["folder"].as_str().unwrap()), f)
}

#[test]
fn shrink_keeps_the_failure_with_fewer_faults_and_does_not_depend_on_jobs() {
    let cfg = busy_kvlog("shrink");
    let (seed, folder, f) = first_failure(&cfg);
    let faults = folder.join("faults.json");
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&faults).unwrap()).unwrap();
    let args = |j: &'static str| vec!["shrink".to_string(), "-c".into(), cfg.display().to_string(), "-seed".into(), seed.to_string(), "-faults".into(), faults.display().to_string(), "-j".into(), j.into()];
    let one = seedfall(&args("1").iter().map(String::as_str).collect::<Vec<_>>());
    let shrunk_one = std::fs::read_to_string(folder.join("faults.shrunk.json")).unwrap();
    let two = seedfall(&args("2").iter().map(String::as_str).collect::<Vec<_>>());
    let shrunk_two = std::fs::read_to_string(folder.join("faults.shrunk.json")).unwrap();
    assert_eq!(one.code, 0, "{}{}", one.stdout, one.stderr);
    assert_eq!(one.stdout, two.stdout, "shrink output is the same at -j 1 and -j 2");
    assert_eq!(shrunk_one, shrunk_two);
    let after: Value = serde_json::from_str(&shrunk_one).unwrap();
    let n_before = before["faults"].as_array().unwrap().len();
    let n_after = after["faults"].as_array().unwrap().len();
    assert!(n_after < n_before, "{n_before} -> {n_after}");
    assert!(n_after >= 1, "losing acknowledged data needs a crash");
    assert!(after["faults"].as_array().unwrap().iter().any(|f| f["kind"] == "crash"));
    let header = format!("faults before the failure ({n_after}):");
    assert!(one.stdout.contains(&header), "{}", one.stdout);
    // The shrunk schedule still fails the same way on replay.
    let replay = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", folder.join("faults.shrunk.json").to_str().unwrap(), "-json"]));
    assert_eq!(replay["verdict"], "fail");
    assert_eq!(replay["failure"]["nodes"][0]["message"], f["nodes"][0]["message"]);
}

#[test]
fn inspect_shows_faults_and_the_failing_property_in_order() {
    let out = seedfall(&["inspect", "-c", "examples/kvlog/seedfall.json", "-seed", "2", "-json"]);
    assert_eq!(out.code, 1);
    let events: Vec<Value> = out.stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let crash = events.iter().position(|e| e["event"] == "crash").expect("a crash");
    let failed = events.iter().position(|e| e["event"] == "property" && e["cond"] == false).expect("the failing property");
    assert!(crash < failed);
    let times: Vec<u64> = events.iter().map(|e| e["time_ns"].as_u64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "in time order");
    assert_eq!(events.last().unwrap()["event"], "end");
    // Filters by kind and node.
    let only = seedfall(&["inspect", "-c", "examples/kvlog/seedfall.json", "-seed", "2", "-kind", "fault,property", "-node", "kv"]);
    let lines: Vec<&str> = only.stdout.lines().filter(|l| l.contains("  kv  ")).collect();
    assert!(!lines.is_empty());
    assert!(lines.iter().all(|l| l.contains(" fault ") || l.contains(" property ")), "{lines:?}");
    let bad = seedfall(&["inspect", "-c", "examples/kvlog/seedfall.json", "-seed", "2", "-kind", "bogus"]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("unknown kind \"bogus\""));
}

#[test]
fn pin_then_run_replays_the_pin_first() {
    let dir = scratch("pin");
    let cfg = dir.join("seedfall.json");
    std::fs::write(&cfg, format!(r#"{{ "duration": "10s", "nodes": [ {{ "name": "bank", "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/ledger").display())).unwrap();
    let out = seedfall(&["pin", "-c", cfg.to_str().unwrap(), "-seed", "6", "-name", "overdraft"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(dir.join("regressions/overdraft.json").is_file());
    let run = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3"]);
    let pins_at = run.stdout.find("pinned regressions (1):").expect("pins first");
    let sweep_at = run.stdout.find("seedfall run:").unwrap();
    assert!(pins_at < sweep_at);
    assert!(run.stdout.contains("still failing  overdraft"), "{}", run.stdout);
    assert_eq!(run.code, 0, "a still-failing pin alone does not fail the run by default");
    let strict = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3", "-fail-on-pinned"]);
    assert_eq!(strict.code, 1);
    // A pin whose failure no longer happens reads as fixed.
    let pin_path = dir.join("regressions/overdraft.json");
    let mut pin: Value = serde_json::from_str(&std::fs::read_to_string(&pin_path).unwrap()).unwrap();
    pin["expected"]["message"] = Value::from("some other failure");
    std::fs::write(&pin_path, pin.to_string()).unwrap();
    std::fs::write(dir.join("regressions/broken.json"), "{ not json").unwrap();
    let run = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-3", "-fail-on-pinned"]);
    assert!(run.stdout.contains("fixed          overdraft"), "{}", run.stdout);
    assert!(run.stderr.contains("skipped a pin") && run.stderr.contains("broken.json"), "{}", run.stderr);
    assert_eq!(run.code, 0);
}

#[test]
fn cause_finds_the_window_of_the_decisive_crash_and_children_replay() {
    // Shrink first: cause writes the failure folder again and must keep
    // what shrink left in it.
    let shrink = seedfall(&["shrink", "-c", "examples/kvlog/seedfall.json", "-seed", "2"]);
    assert_eq!(shrink.code, 0, "{}", shrink.stderr);
    let shrunk = shrink.stdout.lines().find_map(|l| l.strip_prefix("wrote ")).expect("shrink names its file").to_string();
    let out = json(&seedfall(&["cause", "-c", "examples/kvlog/seedfall.json", "-seed", "2", "-json"]));
    assert!(repo().join(&shrunk).is_file(), "cause kept {shrunk}");
    let (after, until) = (out["window"][0].as_u64().unwrap(), out["window"][1].as_u64().unwrap());
    let crashes: Vec<&Value> = out["window_events"].as_array().unwrap().iter().filter(|e| e["event"] == "fault" && e["fault"]["kind"] == "crash").collect();
    assert!(!crashes.is_empty(), "the decisive crash is in the window ({after}..{until}): {}", out["window_events"]);
    let moments = out["moments"].as_array().unwrap();
    assert_eq!(moments.len(), 16);
    assert_eq!(moments.last().unwrap()["failing"], moments.last().unwrap()["children"]);
    // Every child schedule replays exactly: the same verdict cause saw.
    let children = out["children"].as_array().unwrap();
    assert_eq!(children.len(), 16 * 8);
    let (mut passing, mut failing) = (0, 0);
    for child in children {
        let file = repo().join(child["file"].as_str().unwrap());
        let r = json(&seedfall(&["replay", "-c", "examples/kvlog/seedfall.json", "-faults", file.to_str().unwrap(), "-json"]));
        let fails = r["failure"]["nodes"][0]["message"] == "acknowledged writes survive crashes";
        assert_eq!(fails, child["fails"].as_bool().unwrap(), "{}", file.display());
        assert!(r["events"].as_array().unwrap().iter().any(|e| e["event"] == "branch"), "the child re-keys at its moment");
        if fails { failing += 1 } else { passing += 1 }
    }
    // The moments come after the last necessary crash, so (nearly) every child fails.
    let failing_moments: u64 = moments.iter().map(|m| m["failing"].as_u64().unwrap()).sum();
    assert_eq!(failing, failing_moments);
    assert_eq!(passing + failing, 16 * 8);
}

/// Shrink keeps a candidate that fails with the same finding, not the same
/// string: ledger's panic names the teller, and without the pauses another
/// teller overdraws the same account. Matching the exact message would keep
/// faults that do not matter.
#[test]
fn shrink_matches_by_finding_and_shows_both_messages() {
    let ledger = repo().join("examples/ledger");
    let cfg = config(
        "shrink-finding",
        &format!(r#"{{ "version": 1, "name": "ledger-pauses", "duration": "10s", "nodes": [ {{ "name": "bank", "go": {{ "dir": "{}" }} }} ], "faults": {{ "pause": {{ "rate": 300, "duration": "1ms-3ms" }} }} }}"#, ledger.display()),
    );
    let out = seedfall(&["shrink", "-c", cfg.to_str().unwrap(), "-seed", "33"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("shrunk 6 faults to 0 in "), "{}", out.stdout);
    assert!(out.stdout.contains("the same finding, now: account 1 overdrawn: balance -3 after teller 2 moved 48"), "{}", out.stdout);
    assert!(out.stdout.contains("             it was: account 1 overdrawn: balance -3 after teller 3 moved 48"), "{}", out.stdout);
}
