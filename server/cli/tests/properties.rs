//! Properties end to end on real guests: each kind's semantics, sweep-level
//! verdicts against the catalog, the Antithesis SDK, buggify, failure
//! folders, and replaying a failure from its schedule file.
mod common;
use common::*;
use serde_json::Value;

fn props_config(test: &str, mode: &str) -> std::path::PathBuf {
    config(test, &format!(r#"{{ "name": "props", "duration": "2s", "nodes": [ {} ] }}"#, go_node_in("prop", "go-props", mode)))
}

fn go_node_in(name: &str, dir: &str, mode: &str) -> String {
    format!(r#"{{ "name": "{name}", "go": {{ "dir": "$GUESTS/{dir}" }}, "args": ["-mode", "{mode}"] }}"#)
}

fn finding<'a>(out: &'a Value, kind: &str, message: &str) -> Option<&'a Value> {
    out["findings"].as_array().unwrap().iter().find(|f| f["finding"] == kind && f["message"] == message)
}

fn tally<'a>(out: &'a Value, message: &str) -> &'a Value {
    out["properties"].as_array().unwrap().iter().find(|p| p["message"] == message).unwrap_or_else(|| panic!("no property {message}"))
}

#[test]
fn go_property_kinds_and_sweep_verdicts() {
    let cfg = props_config("go-props", "normal");
    let raw = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-40", "-json"]);
    assert_eq!(raw.code, 1);
    let out = json(&raw);
    let main_go = guests().join("go-props/main.go");
    let always_line = line_of(&main_go, "sim.Always(x < 9");
    // always false: fails the run, names the node, message, details and line.
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty() && failures.len() < 12, "{}", failures.len());
    for f in failures {
        let n = &f["nodes"][0];
        assert_eq!(n["kind"], "property");
        assert_eq!(n["message"], "x stays below 9");
        assert_eq!(n["details"], "{\"x\":9}");
        assert!(n["location"].as_str().unwrap().ends_with(&format!("go-props/main.go:{always_line}")), "{n}");
    }
    // Sweep-level: must-hit never reached, sometimes never true; the others are fine.
    let dead = finding(&out, "never_reached", "only in dead-code mode").expect("never reached");
    assert!(dead["location"].as_str().unwrap().ends_with(&format!("main.go:{}", line_of(&main_go, "sim.Always(true, \"only in dead-code mode\""))));
    assert!(finding(&out, "never_true", "x exceeds 100").is_some());
    assert!(finding(&out, "never_reached", "may never run").is_none(), "always_or_unreachable may stay unreached");
    assert!(finding(&out, "never_reached", "the impossible branch ran").is_none(), "unreachable must stay unreached");
    assert!(finding(&out, "never_true", "x is 3 sometimes").is_none());
    assert_eq!(out["findings"].as_array().unwrap().len(), 2, "{}", out["findings"]);
    // The table counts runs: every run reached "ready"; some made "x is 3" true.
    assert_eq!(tally(&out, "ready")["runs_hit"], 40);
    let x3 = tally(&out, "x is 3 sometimes");
    assert_eq!(x3["runs_hit"], 40);
    assert!(x3["runs_true"].as_u64().unwrap() > 0 && x3["runs_true"].as_u64().unwrap() < 15);
    assert_eq!(tally(&out, "x is not negative")["runs_true"], 40);
    assert_eq!(tally(&out, "only in dead-code mode")["runs_hit"], 0);
}

#[test]
fn text_output_lists_properties_and_findings() {
    let cfg = props_config("go-props-text", "dead-code");
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-10"]);
    assert_eq!(out.code, 1);
    assert!(out.stdout.contains("properties:\n"), "{}", out.stdout);
    assert!(out.stdout.lines().any(|l| l.contains("\"ready\"") && l.contains("hit    10 runs")), "{}", out.stdout);
    assert!(out.stdout.contains("never true: sometimes \"x exceeds 100\" at "), "{}", out.stdout);
    assert!(!out.stdout.contains("never reached: always \"only in dead-code mode\""), "reached in dead-code mode");
    assert!(out.stdout.contains("  replay it: seedfall replay -c "), "{}", out.stdout);
}

#[test]
fn unreachable_reached_fails_the_run() {
    let cfg = props_config("go-unreachable", "unreachable");
    let out = json(&seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-10", "-json"]));
    let msgs: Vec<&str> = out["failures"].as_array().unwrap().iter().map(|f| f["nodes"][0]["message"].as_str().unwrap()).collect();
    assert!(msgs.iter().any(|m| *m == "the impossible branch ran"), "{msgs:?}");
}

#[test]
fn antithesis_sdk_code_runs_unchanged() {
    let cfg = config("antithesis", r#"{ "name": "anti", "duration": "2s", "nodes": [ { "name": "app", "go": { "dir": "$GUESTS/go-antithesis" } } ] }"#);
    let out = json(&seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-30", "-json"]));
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "x = 9 happens in some of 30 seeds");
    assert_eq!(failures[0]["nodes"][0]["kind"], "property");
    assert_eq!(failures[0]["nodes"][0]["message"], "antithesis x stays below 9");
    assert_eq!(failures[0]["nodes"][0]["details"], "{\"x\":9}");
    assert!(failures[0]["nodes"][0]["location"].as_str().unwrap().ends_with("go-antithesis/main.go:23"));
    assert!(finding(&out, "never_reached", "antithesis never reached").is_some(), "the catalog scan found assert.Always");
    assert_eq!(tally(&out, "antithesis reached main")["runs_hit"], 30);
    let replay = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "2", "-json"]));
    assert!(replay["events"].as_array().unwrap().iter().any(|e| e["event"] == "setup_complete"), "lifecycle.SetupComplete");
}

#[test]
fn failure_folder_holds_everything_and_replays_exactly() {
    let cfg = props_config("artifacts", "normal");
    let out = json(&seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-20", "-json"]));
    let first = out["failures"].as_array().unwrap().iter().find(|f| f["folder"].is_string()).expect("a kept folder");
    let folder = repo().join(first["folder"].as_str().unwrap());
    let name = folder.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.starts_with(&format!("props-seed-{}-property-", first["seed"])), "{name}");
    assert_eq!(folder.parent().unwrap(), cfg.parent().unwrap().join(".seedfall/failures"));
    let faults: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("faults.json")).unwrap()).unwrap();
    assert_eq!(faults["version"], 1);
    assert_eq!(faults["config"], "props");
    assert_eq!(faults["seed"], first["seed"]);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["failure"]["kind"], "property");
    assert_eq!(summary["trace_hash"], first["trace_hash"]);
    assert!(std::fs::read_to_string(folder.join("prop.stdout")).unwrap().contains("x = 9\n"));
    let trace = std::fs::read_to_string(folder.join("trace.jsonl")).unwrap();
    let events: Vec<Value> = trace.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(events.iter().any(|e| e["event"] == "property" && e["message"] == "x stays below 9" && e["cond"] == false));
    assert_eq!(events.last().unwrap()["event"], "end");
    // Replaying the schedule file reproduces the failure exactly.
    let replay = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", folder.join("faults.json").to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], summary["trace_hash"]);
    assert_eq!(replay["failure"]["nodes"][0]["message"], first["nodes"][0]["message"]);
    // No half-written folders are left behind.
    let leftovers = std::fs::read_dir(folder.parent().unwrap()).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with(".tmp")).count();
    assert_eq!(leftovers, 0);
}

#[test]
fn buggify_fires_per_foundationdb_and_replays_from_its_schedule() {
    let cfg = props_config("buggify", "buggify");
    let mut enabled_seeds = 0;
    let mut sample: Option<(u64, Vec<Value>, String, String)> = None;
    for seed in 1..=24u64 {
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", &seed.to_string(), "-json"]));
        let faults: Vec<Value> = r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "fault").map(|e| e["fault"].clone()).collect();
        let printed = r["events"].as_array().unwrap().iter().find_map(|e| e["text"].as_str().filter(|t| t.starts_with("buggify fired")).map(str::to_string)).unwrap();
        assert_eq!(printed, format!("buggify fired {} times", faults.len()));
        if !faults.is_empty() {
            enabled_seeds += 1;
            assert!(faults.len() < 20, "an enabled site fires on about 1 call in 4");
            if sample.is_none() && faults.len() >= 2 {
                sample = Some((seed, faults, r["trace_hash"].as_str().unwrap().to_string(), printed));
            }
        }
    }
    assert!((2..=14).contains(&enabled_seeds), "a site is enabled in about 1 run in 4: {enabled_seeds}/24");
    let (seed, faults, hash, _) = sample.expect("some seed fires twice or more");
    for f in &faults {
        assert_eq!(f["kind"], "buggify");
        assert_eq!(f["site"], "slow-path");
        assert_eq!(f["node"], "prop");
    }
    // The recorded firings, as a schedule, replay the run exactly...
    let dir = cfg.parent().unwrap();
    let file = dir.join("faults.json");
    let schedule = serde_json::json!({ "version": 1, "config": "props", "seed": seed, "faults": faults, "branches": [] });
    std::fs::write(&file, schedule.to_string()).unwrap();
    let again = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]));
    assert_eq!(again["trace_hash"], hash.as_str());
    // ...and a schedule without one firing applies exactly the rest.
    let fewer = serde_json::json!({ "version": 1, "config": "props", "seed": seed, "faults": faults[1..], "branches": [] });
    std::fs::write(&file, fewer.to_string()).unwrap();
    let less = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap(), "-json"]));
    let printed = less["events"].as_array().unwrap().iter().find_map(|e| e["text"].as_str().filter(|t| t.starts_with("buggify fired"))).unwrap().to_string();
    assert_eq!(printed, format!("buggify fired {} times", faults.len() - 1));
}

#[test]
fn schedule_files_that_do_not_fit_the_config_are_refused() {
    let cfg = props_config("bad-schedule", "normal");
    let file = cfg.parent().unwrap().join("faults.json");
    std::fs::write(&file, r#"{"version": 1, "config": "props", "seed": 3, "faults": [{"kind": "buggify", "node": "ghost", "site": "s", "call": 1, "at_ns": 0}], "branches": []}"#).unwrap();
    let out = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", file.to_str().unwrap()]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("names node instance \"ghost\", which"), "{}", out.stderr);
    assert!(out.stderr.contains("(it has: prop)"), "{}", out.stderr);
    let out = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "4", "-faults", file.to_str().unwrap()]);
    assert_eq!(out.code, 2);
}

#[test]
fn explore_example_plain_sweep_passes_without_opening_the_vault() {
    let out = seedfall(&["run", "-c", "examples/explore/seedfall.json", "-seeds", "1-20", "-json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = json(&out);
    assert_eq!(out["failed"], 0);
    let reached: Vec<&str> = out["properties"].as_array().unwrap().iter().filter(|p| p["runs_true"].as_u64().unwrap() > 0).map(|p| p["message"].as_str().unwrap()).collect();
    assert!(!reached.contains(&"level 6 reached"));
    assert_eq!(tally(&out, "the vault opened after 6 consecutive lucky draws")["runs_hit"], 0);
    let warnings = out["catalog_warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().contains("main.go") && w.as_str().unwrap().contains("not a string literal")));
}

#[test]
fn rust_property_kinds_with_the_catalog_from_the_custom_section() {
    let cfg = config("rust-props", r#"{ "name": "rprops", "duration": "2s", "nodes": [ { "name": "r", "cargo": { "dir": "$GUESTS/rust-props" } } ] }"#);
    let raw = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-40", "-json"]);
    assert_eq!(raw.code, 1);
    let out = json(&raw);
    let main_rs = guests().join("rust-props/src/main.rs");
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty() && failures.len() < 12);
    for f in failures {
        let n = &f["nodes"][0];
        assert_eq!(n["kind"], "property");
        assert_eq!(n["message"], "rust x stays below 9");
        assert_eq!(n["details"], "{\"x\":\"9\"}");
        assert!(n["location"].as_str().unwrap().ends_with(&format!("rust-props/src/main.rs:{}", line_of(&main_rs, "x < 9, \"rust x stays below 9\""))), "{n}");
    }
    assert!(finding(&out, "never_reached", "rust only in dead-code mode").is_some(), "{}", out["findings"]);
    assert!(finding(&out, "never_true", "rust x exceeds 100").is_some());
    assert!(finding(&out, "never_reached", "rust impossible branch ran").is_none());
    assert_eq!(out["findings"].as_array().unwrap().len(), 2, "{}", out["findings"]);
    assert_eq!(tally(&out, "rust ready")["runs_hit"], 40);
    let dead = tally(&out, "rust only in dead-code mode");
    assert_eq!(dead["in_catalog"], true);
    assert!(dead["location"].as_str().unwrap().ends_with(&format!(":{}", line_of(&main_rs, "\"rust only in dead-code mode\""))), "{dead}");
}

#[test]
fn explore_rust_twin_passes_a_plain_sweep() {
    let out = seedfall(&["run", "-c", "examples/explore/seedfall.rust.json", "-seeds", "1-20", "-json"]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    let out = json(&out);
    let vault = tally(&out, "the vault opened after 6 consecutive lucky draws");
    assert_eq!(vault["in_catalog"], true, "from the Rust catalog section");
    assert_eq!(vault["runs_hit"], 0);
}

/// Records name files relative to the config's folder: a workspace moved
/// elsewhere (or cloned with its `.seedfall/`) still points at its sources.
#[test]
fn records_hold_paths_relative_to_the_config() {
    let dir = scratch("relative-records");
    let src = repo().join("examples/kvlog");
    for f in ["main.go", "go.mod", "seedfall.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let gomod = std::fs::read_to_string(dir.join("go.mod")).unwrap().replace("=> ../../sdk/go", &format!("=> {}", repo().join("sdk/go").display()));
    std::fs::write(dir.join("go.mod"), gomod).unwrap();
    let cfg = dir.join("seedfall.json");
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-20"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let failures = dir.join(".seedfall/failures");
    let folder = std::fs::read_dir(&failures).unwrap().flatten().next().unwrap().path();
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(folder.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["version"], 2);
    assert_eq!(summary["config_path"], "seedfall.json");
    assert_eq!(summary["source"]["file"], "main.go");
    assert_eq!(summary["source"]["line"], line_of(&dir.join("main.go"), "acknowledged writes survive crashes") as u64);
    let name = folder.file_name().unwrap().to_str().unwrap();
    assert!(summary["replay"].as_str().unwrap().ends_with(&format!("-faults .seedfall/failures/{name}/faults.json")), "{}", summary["replay"]);
    let last_run = std::fs::read_dir(dir.join(".seedfall/last-run")).unwrap().flatten().next().unwrap().path();
    let last: Value = serde_json::from_str(&std::fs::read_to_string(last_run).unwrap()).unwrap();
    assert_eq!(last["version"], 2);
    for p in last["properties"].as_array().unwrap() {
        assert_eq!(p["source"]["file"], "main.go", "{p}");
        assert!(!p["location"].as_str().unwrap().starts_with('/'), "{p}");
    }
    // Nothing seedfall wrote names this machine's folders.
    for e in walk(&dir.join(".seedfall")) {
        let text = std::fs::read_to_string(&e).unwrap_or_default();
        assert!(!text.contains(dir.to_str().unwrap()), "{} holds an absolute path", e.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() { out.extend(walk(&e.path())) } else { out.push(e.path()) }
    }
    out
}
