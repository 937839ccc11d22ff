//! Go guests' defaults (docs/sdk-go.md#faster-by-default), on a guest that
//! makes keys and signs (tests/guests/go-ed25519): with ed25519's base-point
//! table as static data (`go.precomputed_tables`) it prints what the same
//! program prints natively, as it does without the table, and reaches its
//! first key in a fraction of the virtual time; the runtime collects at
//! GOGC=400 unless the node's env sets GOGC. (Linux's error texts, the
//! third default, are go_storage's flock test.)
mod common;
use common::*;
use serde_json::Value;
use std::process::Command;

fn printed(r: &Value) -> Vec<(u64, String)> {
    let events = r["events"].as_array().expect("a replay's events");
    events.iter().filter(|e| e["event"] == "output" && e["stream"] == "stdout").map(|e| (e["time_ns"].as_u64().unwrap(), e["text"].as_str().unwrap().to_string())).collect()
}

#[test]
fn ed25519_keys_and_signatures_are_the_native_ones_with_the_precomputed_table_and_without() {
    let dir = guests().join("go-ed25519");
    let native = Command::new("go").current_dir(&dir).env_remove("GOOS").env_remove("GOARCH").args(["run", "."]).output().expect("go run");
    assert!(native.status.success(), "{}", String::from_utf8_lossy(&native.stderr));
    let native: Vec<String> = String::from_utf8_lossy(&native.stdout).lines().map(str::to_string).collect();
    assert_eq!(native.len(), 8, "{native:?}");

    let mut first_key_ns = Vec::new();
    for (name, setting) in [("tables-on", ""), ("tables-off", r#", "precomputed_tables": false"#)] {
        let cfg = config(name, &format!(r#"{{ "name": "{name}", "duration": "2s", "nodes": [ {{ "name": "k", "go": {{ "dir": "$GUESTS/go-ed25519"{setting} }} }} ] }}"#));
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "1", "-json"]));
        assert_eq!(r["verdict"], "pass", "{name}: {}", r["failure"]);
        let lines = printed(&r);
        let texts: Vec<&String> = lines.iter().map(|(_, t)| t).collect();
        assert_eq!(texts, native.iter().collect::<Vec<_>>(), "{name}: the guest's keys and signatures differ from the native build's");
        first_key_ns.push(lines[0].0);
    }
    // The first key pays for the table: about 150 ms of virtual time
    // computed, none precomputed.
    let (on, off) = (first_key_ns[0], first_key_ns[1]);
    assert!(on * 2 < off, "the first key came at {on} ns with the table and {off} ns without: the table was not used");
}

#[test]
fn precomputed_tables_takes_a_bool() {
    let cfg = config("tables-bad", r#"{ "name": "bad", "duration": "1s", "nodes": [ { "name": "k", "go": { "dir": "$GUESTS/go-ed25519", "precomputed_tables": "yes" } } ] }"#);
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1"]);
    assert_ne!(out.code, 0);
    assert!(out.stderr.contains("nodes[0].go.precomputed_tables"), "{}", out.stderr);
}

#[test]
fn a_go_node_collects_at_gogc_400_unless_its_env_says_otherwise() {
    for (name, env, want) in [("gogc-default", "", "gc percent 400"), ("gogc-env", r#", "env": { "GOGC": "100" }"#, "gc percent 100"), ("gogc-off", r#", "env": { "GOGC": "off" }"#, "gc percent -1")] {
        let cfg = config(name, &format!(r#"{{ "name": "{name}", "duration": "1s", "nodes": [ {{ "name": "k", "go": {{ "dir": "$GUESTS/go-ed25519" }}, "args": ["-gc"]{env} }} ] }}"#));
        let r = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-seed", "1", "-json"]));
        let lines: Vec<String> = printed(&r).into_iter().map(|(_, t)| t).collect();
        assert_eq!(lines, [want], "{name}");
    }
}
