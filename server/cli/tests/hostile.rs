//! Hostile guests and bad input: every attack ends in a clean failure or a
//! clear error, with the host's memory and wall time bounded.
//!
//! The guest is tests/guests/rust-hostile (one mode per attack); `table.grow`
//! has no stable Rust spelling, so that one is a WAT module written here.
//! Memory is the child's peak RSS (wait4), wall time is measured around it;
//! both are compared with generous bounds, never timed to the millisecond.
mod common;
use common::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn hostile(test: &str, mode: &str, extra: &str) -> PathBuf {
    config(test, &format!(r#"{{ "name": "{test}", "duration": "10s", {extra} "nodes": [ {{ "name": "h", "cargo": {{ "dir": "$GUESTS/rust-hostile" }}, "args": ["{mode}"] }} ] }}"#))
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// The one failure of a one-seed `run -json`.
fn failure(m: &Measured) -> Value {
    let out = json(&m.out);
    assert_eq!(out["failed"], 1, "{out}");
    out["failures"][0]["nodes"][0].clone()
}

fn bounded(m: &Measured, rss_mb: u64, wall_s: u64, what: &str) {
    assert!(m.rss_mb <= rss_mb, "{what}: peak RSS {} MiB, bound {rss_mb} MiB", m.rss_mb);
    assert!(m.wall <= Duration::from_secs(wall_s), "{what}: {:?}, bound {wall_s}s", m.wall);
    assert_ne!(m.out.code, 101, "{what} panicked:\n{}", m.out.stderr);
}

#[test]
fn a_disk_that_fills_fails_cleanly_at_the_runs_memory_share() {
    let cfg = hostile("bigfile", "bigfile", "");
    let m = measured(&["run", "-c", p(&cfg), "-seeds", "1-2", "-j", "2", "-memory-budget", "512MiB", "-json"]);
    let out = json(&m.out);
    assert_eq!(out["failed"], 2, "{out}");
    for f in out["failures"].as_array().unwrap() {
        let n = &f["nodes"][0];
        assert_eq!((n["kind"].as_str(), n["node"].as_str()), (Some("limit"), Some("h")), "{n}");
        let msg = n["message"].as_str().unwrap();
        assert!(msg.starts_with("node h: the simulated disk holds "), "{msg}");
        assert!(msg.contains("the run's memory limit is 192.0 MiB (the share of each of 2 workers in the runs' 384.0 MiB of the memory budget of 512.0 MiB"), "{msg}");
    }
    // Two runs at once, each within its share (and one copy of the data).
    bounded(&m, 384 + 200, 120, "bigfile");
    // A limit the config fixes is the same at any -j.
    let cfg = hostile("bigfile-fixed", "bigfile", r#""limits": { "run_memory_mb": 128 },"#);
    let m = measured(&["run", "-c", p(&cfg), "-seeds", "1", "-j", "4", "-memory-budget", "384MiB", "-json"]);
    let n = failure(&m);
    assert!(n["message"].as_str().unwrap().ends_with("the run's memory limit is 128.0 MiB (limits.run_memory_mb)"), "{n}");
    assert!(m.out.stderr.contains("running 2 at a time"), "{}", m.out.stderr);
    bounded(&m, 128 + 200, 60, "bigfile, fixed limit");
}

#[test]
fn memory_growth_stops_at_the_nodes_limit_and_at_the_runs() {
    let cfg = hostile("grow", "grow", r#""limits": { "memory_mb": 128 },"#);
    let m = measured(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]);
    let n = failure(&m);
    assert_eq!(n["kind"], "panic", "{n}");
    assert!(n["message"].as_str().unwrap().ends_with("failed (the node's memory limit is 128 MiB: limits.memory_mb)"), "{n}");
    bounded(&m, 128 + 200, 60, "grow to memory_mb");
    let cfg = hostile("grow-run", "grow", r#""limits": { "memory_mb": 512, "run_memory_mb": 96 },"#);
    let m = measured(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]);
    let n = failure(&m);
    assert_eq!(n["kind"], "limit", "{n}");
    assert!(n["message"].as_str().unwrap().starts_with("node h: growing its memory by "), "{n}");
    bounded(&m, 96 + 200, 60, "grow to run_memory_mb");
}

#[test]
fn failing_grows_and_poll_storms_trip_the_watchdog_quickly() {
    for (mode, what) in [("failgrow", "failed memory.grow x"), ("poll", "poll_oneoff subscriptions x")] {
        let cfg = hostile(mode, mode, "");
        let m = measured(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]);
        let n = failure(&m);
        assert_eq!(n["kind"], "watchdog", "{n}");
        let msg = n["message"].as_str().unwrap();
        assert!(msg.starts_with("node h ran 2000000000 instructions without blocking (limits.watchdog_instructions); host work charged since it last blocked: "), "{msg}");
        assert!(msg.contains(what), "{msg}");
        // The work passed on the clock too: the watchdog's 2e9 is ~2s.
        let out = json(&m.out);
        assert!(out["failures"][0]["time_ns"].as_u64().unwrap() >= 1_000_000_000, "{out}");
        bounded(&m, 300, 60, mode);
    }
}

#[test]
fn a_table_grow_loop_trips_the_watchdog_with_the_clock_moving() {
    let dir = scratch("tablegrow");
    let wasm = wat::parse_str(
        r#"(module
             (memory (export "memory") 1)
             (table 1 funcref)
             (func (export "_start")
               (loop $l
                 (drop (table.grow (ref.null func) (i32.const 1000)))
                 (br $l))))"#,
    )
    .unwrap();
    std::fs::write(dir.join("t.wasm"), wasm).unwrap();
    std::fs::write(dir.join("seedfall.json"), r#"{ "name": "tg", "duration": "10s", "nodes": [ { "name": "t", "wasm": "t.wasm" } ] }"#).unwrap();
    let m = measured(&["run", "-c", p(&dir.join("seedfall.json")), "-seeds", "1", "-json"]);
    let n = failure(&m);
    assert_eq!(n["kind"], "watchdog", "{n}");
    assert!(n["message"].as_str().unwrap().contains("table.grow x"), "{n}");
    let out = json(&m.out);
    assert!(out["failures"][0]["time_ns"].as_u64().unwrap() >= 1_000_000_000, "the clock stood still: {out}");
    bounded(&m, 300, 60, "table.grow");
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).unwrap().flatten().map(|e| e.metadata().unwrap().len()).sum()
}

#[test]
fn a_gigabyte_line_is_capped_in_memory_and_in_the_failure_folder() {
    let cfg = hostile("bigline", "bigline", "");
    let m = measured(&["run", "-c", p(&cfg), "-seeds", "1", "-json"]);
    let n = failure(&m);
    assert_eq!(n["message"], "after a 1 GiB line", "{n}");
    // Paths in output are relative to the current folder (the repo here).
    let folder = repo().join(json(&m.out)["failures"][0]["folder"].as_str().unwrap());
    assert!(folder_bytes(&folder) < 20 << 20, "{} holds {} bytes", folder.display(), folder_bytes(&folder));
    let stdout = std::fs::read_to_string(folder.join("h.stdout")).unwrap();
    assert!(stdout.ends_with("[seedfall: output past 4.0 MiB per stream is not kept (limits.output_mb, or -output-cap): 1020.0 MiB more in 65280 lines were hashed, not kept]\n"), "{}", &stdout[stdout.len() - 300..]);
    bounded(&m, 300, 90, "bigline");
    // The cap changes what is kept, never what the run did.
    let a = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1", "-json", "-hashes"]));
    let b = json(&seedfall(&["run", "-c", p(&cfg), "-seeds", "1", "-json", "-hashes", "-output-cap", "64KiB"]));
    assert_eq!(a["trace_hashes"], b["trace_hashes"]);
    let folder_b = repo().join(b["failures"][0]["folder"].as_str().unwrap());
    assert!(std::fs::read_to_string(folder_b.join("h.stdout")).unwrap().contains("output past 64.0 KiB per stream"));
}

#[test]
fn no_host_file_or_variable_reaches_the_guest() {
    let cfg = hostile("escape", "escape", "");
    let r = json(&seedfall(&["replay", "-c", p(&cfg), "-seed", "1", "-json"]));
    let lines: Vec<&str> = r["events"].as_array().unwrap().iter().filter(|e| e["event"] == "output").map(|e| e["text"].as_str().unwrap()).collect();
    let escapes: Vec<&&str> = lines.iter().filter(|l| l.starts_with("escape ")).collect();
    assert_eq!(escapes.len(), 5, "{lines:?}");
    assert!(escapes.iter().all(|l| !l.contains("read ")), "a host file was read: {lines:?}");
    assert!(lines.contains(&"env keys: SEEDFALL_NODE,ANTITHESIS_SDK_LOCAL_OUTPUT"), "{lines:?}");
    assert!(lines.contains(&"HOME=None PATH=None"), "{lines:?}");
}

#[test]
fn the_guests_environment_cannot_be_spoofed() {
    let cfg = hostile("env", "env", "");
    let body = std::fs::read_to_string(&cfg).unwrap().replace(r#""args": ["env"]"#, r#""args": ["env"], "env": { "SEEDFALL_NODE": "db#9" }"#);
    std::fs::write(&cfg, body).unwrap();
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("$.nodes[0].env.SEEDFALL_NODE: SEEDFALL_NODE is set by seedfall itself"), "{}", out.stderr);
}

#[test]
fn guest_messages_cannot_drive_the_terminal() {
    let cfg = hostile("ctrl", "ctrl", "");
    for args in [vec!["run", "-c", p(&cfg), "-seeds", "1"], vec!["replay", "-c", p(&cfg), "-seed", "1"]] {
        let out = seedfall(&args);
        for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
            assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'), "{args:?} {name} carries control bytes: {text:?}");
        }
        assert!(out.stdout.contains(r"evil \e[2J\e[31mred\u{7}\r"), "{args:?}: {}", out.stdout);
    }
    // One-line places (the property table) show the newline too.
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert!(out.stdout.lines().any(|l| l.contains(r#""evil \e[2J\e[31mred\u{7}\r\n overwritten""#) && l.contains(" hit ")), "{}", out.stdout);
}

/// A config of one guest that passes, for the bad-input tests.
fn plain(test: &str) -> PathBuf {
    hostile(test, "escape", "")
}

fn fails_cleanly(args: &[&str], needles: &[&str]) -> Out {
    let out = seedfall(args);
    assert_eq!(out.code, 2, "{args:?}: exit {}\n{}", out.code, out.stderr);
    for n in needles {
        assert!(out.stderr.contains(n), "{args:?}: {n:?} not in\n{}", out.stderr);
    }
    out
}

#[test]
fn bad_configs_and_files_get_clear_errors() {
    let cfg = plain("badinput");
    let dir = cfg.parent().unwrap().to_path_buf();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    let node = r#"{ "name": "h", "cargo": { "dir": "$GUESTS/rust-hostile" } }"#.replace("$GUESTS", &guests().display().to_string());
    // Durations past the documented maximum, with file, path and limit.
    let c = write("long.json", &format!(r#"{{ "duration": "2s", "disk": {{ "io_latency": "10000h" }}, "nodes": [ {node} ] }}"#));
    fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["long.json: $.disk.io_latency: expected a duration of at most 1000h, found \"10000h\""]);
    // Flags with bounds say them.
    fails_cleanly(&["run", "-c", p(&cfg), "-seeds", "1", "-keep-failures", "0"], &["-keep-failures: expected 1 to 1000, found 0"]);
    // Duplicate keys are not resolved silently.
    let c = write("dup.json", &format!(r#"{{ "duration": "2s", "duration": "3s", "nodes": [ {node} ] }}"#));
    fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["dup.json: $.duration: \"duration\" is given twice"]);
    // A huge bad value is not echoed whole.
    let c = write("huge.json", &format!(r#"{{ "duration": "{}", "nodes": [ {node} ] }}"#, "x".repeat(1 << 20)));
    let out = fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["huge.json: $.duration"]);
    assert!(out.stderr.len() < 4096, "{} bytes of error", out.stderr.len());
    // Not a regular file: neither read forever nor waited on.
    fails_cleanly(&["run", "-c", "/dev/zero", "-seeds", "1"], &["the config /dev/zero is not a regular file"]);
    let fifo = dir.join("fifo.json");
    let path = std::ffi::CString::new(p(&fifo)).unwrap();
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    fails_cleanly(&["run", "-c", p(&fifo), "-seeds", "1"], &["is not a regular file"]);
    // A wasm path that is a folder, and a file that is not a module.
    std::fs::create_dir_all(dir.join("m.wasm")).unwrap();
    let c = write("dirwasm.json", r#"{ "duration": "2s", "nodes": [ { "name": "w", "wasm": "m.wasm" } ] }"#);
    fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["dirwasm.json: $.nodes[0].wasm: node \"w\": wasm file", "m.wasm is a folder, expected a .wasm file"]);
    write("junk.wasm", "this is not wasm at all");
    let c = write("junk.json", r#"{ "duration": "2s", "nodes": [ { "name": "w", "wasm": "junk.wasm" } ] }"#);
    let out = fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["junk.json: $.nodes[0].wasm", "junk.wasm is not a WebAssembly module"]);
    assert!(out.stderr.lines().count() <= 2, "{}", out.stderr);
    // A module whose memory starts above memory_mb, in the config's terms.
    std::fs::write(dir.join("big.wasm"), wat::parse_str(r#"(module (memory (export "memory") 4096) (func (export "_start")))"#).unwrap()).unwrap();
    let c = write("bigmem.json", r#"{ "duration": "2s", "limits": { "memory_mb": 16 }, "nodes": [ { "name": "w", "wasm": "big.wasm" } ] }"#);
    fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["bigmem.json: $.limits.memory_mb: node \"w\": the module's memory starts at 256 MiB, more than the 16 MiB"]);
    // A build error says which config and node.
    let c = write("nodir.json", r#"{ "duration": "2s", "nodes": [ { "name": "g", "go": { "dir": "nowhere" } } ] }"#);
    fails_cleanly(&["run", "-c", p(&c), "-seeds", "1"], &["nodir.json: $.nodes[0].go: node \"g\": go.dir"]);
    // A schedule file with a duration no clock can hold: an error, not a panic.
    let sched = write("faults.json", &json!({ "version": 1, "config": "badinput", "seed": 1, "faults": [ { "kind": "pause", "node": "h", "at_ns": 1000, "duration_ns": u64::MAX } ], "branches": [] }).to_string());
    fails_cleanly(&["replay", "-c", p(&cfg), "-faults", p(&sched)], &["duration_ns 18446744073709551615 is over the longest duration a run may have"]);
    let sched = write("faults2.json", &json!({ "version": 1, "config": "badinput", "seed": 1, "faults": [ { "kind": "pause", "node": "h", "at_ns": 1000, "duration_ns": 5, "extra": 1 } ], "branches": [] }).to_string());
    fails_cleanly(&["replay", "-c", p(&cfg), "-faults", p(&sched)], &["unknown field `extra`"]);
}

#[test]
fn a_bad_pin_or_corpus_entry_is_skipped_not_fatal() {
    let cfg = plain("badpin");
    let dir = cfg.parent().unwrap();
    std::fs::create_dir_all(dir.join("regressions")).unwrap();
    let pause = json!([{ "kind": "pause", "node": "h", "at_ns": 1000, "duration_ns": u64::MAX }]);
    let pin = json!({ "version": 1, "name": "huge", "config": "badpin", "seed": 1, "faults": pause, "branches": [], "expected": { "kind": "property", "node": "h", "message": "x" } });
    std::fs::write(dir.join("regressions/huge.json"), pin.to_string()).unwrap();
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1"]);
    assert_ne!(out.code, 101, "{}", out.stderr);
    assert!(out.stderr.contains("skipped a pin") && out.stderr.contains("huge.json") && out.stderr.contains("over the longest duration"), "{}", out.stderr);
    // Explore writes its corpus; an entry made hostile is skipped next time.
    let out = json(&seedfall(&["explore", "-c", p(&cfg), "-rounds", "1", "-batch", "2", "-json"]));
    let corpus = repo().join(out["corpus"].as_str().unwrap());
    let entry = std::fs::read_dir(&corpus).unwrap().flatten().find(|e| e.path().extension().is_some_and(|x| x == "json")).expect("a corpus entry").path();
    let mut e: Value = serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
    e["faults"] = pause;
    std::fs::write(&entry, e.to_string()).unwrap();
    let out = seedfall(&["explore", "-c", p(&cfg), "-rounds", "1", "-batch", "2"]);
    assert_ne!(out.code, 101, "{}", out.stderr);
    assert!(out.stderr.contains("skipped a stale corpus entry") && out.stderr.contains("over the longest duration"), "{}", out.stderr);
}

#[test]
fn failure_folders_stay_within_their_budget_and_stale_temporaries_go() {
    let cfg = hostile("budget", "ctrl", "");
    let failures = cfg.parent().unwrap().join(".seedfall/failures");
    std::fs::create_dir_all(failures.join(".tmp-budget-seed-1-x-4194303-0")).unwrap();
    let out = seedfall(&["run", "-c", p(&cfg), "-seeds", "1-6", "-failures-budget", "10KiB", "-keep-failures", "6"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("over their budget of 10.0 KiB (-failures-budget): removed"), "{}", out.stderr);
    let left: Vec<String> = std::fs::read_dir(&failures).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    assert!(!left.iter().any(|n| n.starts_with(".tmp-")), "a stale temporary folder stayed: {left:?}");
    assert!(!left.is_empty() && left.len() < 6, "{left:?}");
    // The output never points at a folder the budget removed.
    for saved in out.stdout.lines().filter_map(|l| l.trim().strip_prefix("saved in ")) {
        assert!(repo().join(saved).is_dir(), "{saved} was removed but is named: {}", out.stdout);
    }
}
