//! Property tests over everything seedfall parses from files a user (or an
//! adversary) can edit: configs, schedule files, pins and corpus entries.
//! Each case must be accepted or rejected with a message; none may panic.
//! Accepted schedules are then run on a real (tiny) guest, so extreme but
//! accepted values are exercised by the engine too. Fixed case counts:
//! the suite runs them in CI.
use proptest::prelude::*;
use serde_json::{json, Value};
use seedfall_sim::{Config, Engine, EngineOptions, Program, RunOptions, ScheduleFile};
use std::path::{Path, PathBuf};

/// A guest that sleeps 1ms and prints a line, forever.
const GUEST: &str = r#"(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "\01\00\00\00")
  (data (i32.const 24) "\40\42\0f\00\00\00\00\00")
  (data (i32.const 200) "\2c\01\00\00\05\00\00\00")
  (data (i32.const 300) "tick\0a")
  (func (export "_start")
    (loop $l
      (drop (call $poll (i32.const 0) (i32.const 64) (i32.const 1) (i32.const 128)))
      (drop (call $write (i32.const 1) (i32.const 200) (i32.const 1) (i32.const 132)))
      (br $l))))"#;

fn scratch() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-scratch").join(format!("parse-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("g.wasm"), wat::parse_str(GUEST).unwrap()).unwrap();
    dir
}

const CONFIG: &str = r#"{ "name": "fz", "duration": "200ms",
  "nodes": [ { "name": "a", "replicas": 2, "wasm": "g.wasm" }, { "name": "b", "wasm": "g.wasm" } ],
  "faults": { "crash": { "rate": 2, "restart_after": "1ms-5ms" }, "pause": { "rate": 2, "duration": "1ms-10ms" } } }"#;

fn program(dir: &Path) -> Program {
    let config = Config::parse(&dir.join("seedfall.json"), CONFIG).unwrap();
    let engine = Engine::new(EngineOptions::default()).unwrap();
    let module = engine.compile(&std::fs::read(dir.join("g.wasm")).unwrap()).unwrap();
    Program::new(&engine, config, vec![module.clone(), module]).unwrap()
}

/// Numbers where bugs live: edges of every width, the duration maximum.
fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(u64::MAX)),
        Just(json!(u64::MAX - 1)),
        Just(json!(i64::MAX)),
        Just(json!(i64::MIN)),
        Just(json!(u32::MAX)),
        Just(json!(3_600_000_000_000_000u64)),
        Just(json!(3_600_000_000_000_001u64)),
        Just(json!(-1)),
        Just(json!(1.5e300)),
        (0u64..10_000_000_000).prop_map(|n| json!(n)),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        number(),
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop_oneof![
            Just("1s"), Just("10000h"), Just("1000h"), Just("0s"), Just("-1s"), Just("5ms-1ms"), Just("1ns"), Just("18446744073709551615ns"),
            Just("a#1"), Just("a#2"), Just("b"), Just("zz"), Just(""), Just("posix"), Just("ext4"), Just("both"), Just("inbound"),
        ]
        .prop_map(|s| json!(s)),
        "[a-z0-9#.\\-]{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{1,10}", inner, 0..5).prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

const FAULT_KINDS: &[&str] = &["crash", "crash", "fsync_eio", "pause", "pause", "clock_skew", "clock_jump", "buggify", "partition", "partition", "corrupt_read", "latent_sector_error", "misdirected_write", "lost_write", "write_error", "disk_full", "nonsense"];
const FAULT_FIELDS: &[&str] = &["at_ns", "duration_ns", "restart_after_ns", "disk_op", "torn", "sync", "rate_ppm", "delta_ns", "site", "call", "peers", "direction", "read", "write", "byte", "bit", "sector", "to_sector", "path", "errno"];

/// The fields each kind needs (the rest are optional).
fn required(kind: &str) -> &'static [&'static str] {
    match kind {
        "fsync_eio" => &["sync"],
        "pause" | "partition" => &["duration_ns"],
        "clock_skew" => &["rate_ppm", "duration_ns"],
        "clock_jump" => &["delta_ns"],
        "buggify" => &["site", "call"],
        "corrupt_read" => &["read", "byte", "bit"],
        "latent_sector_error" => &["read", "sector"],
        "misdirected_write" => &["write", "to_sector"],
        "lost_write" => &["write"],
        "write_error" => &["write", "errno"],
        "disk_full" => &["duration_ns"],
        _ => &[],
    }
}

/// A fault object: a kind, a node, its fields with edge values, and now
/// and then a field it does not have.
fn fault() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(FAULT_KINDS),
        prop_oneof![12 => prop::sample::select(&["a#1", "a#2", "b"][..]), 1 => Just("zz")],
        prop::collection::vec(prop_oneof![6 => (0u64..400_000_000).prop_map(|n| json!(n)), 3 => number(), 1 => scalar()], 4),
        prop::collection::btree_map(prop::sample::select(FAULT_FIELDS), prop_oneof![4 => number(), 1 => scalar()], 0..2),
        prop::bool::weighted(0.15),
    )
        .prop_map(|(kind, node, values, extra, with_extra)| {
            let mut m = serde_json::Map::new();
            m.insert("kind".into(), json!(kind));
            m.insert("node".into(), json!(node));
            // at_ns is usually valid, so that later fields are reached.
            m.insert("at_ns".into(), json!(1_000_000));
            for (k, v) in required(kind).iter().zip(values) {
                let v = if *k == "site" { json!("s") } else if *k == "errno" { json!("ENOSPC") } else if *k == "bit" { json!(v.as_u64().map_or(3, |b| b % 9)) } else { v };
                m.insert(k.to_string(), v);
            }
            if with_extra {
                for (k, v) in extra {
                    m.insert(k.to_string(), v);
                }
            }
            Value::Object(m)
        })
}

fn branch() -> impl Strategy<Value = Value> {
    (number(), prop::collection::vec(prop::sample::select(&["sched", "net", "disk", "faults", "random", "bogus"][..]), 0..3), number())
        .prop_map(|(at, streams, key)| json!({ "at_ns": at, "streams": streams, "key": key }))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, failure_persistence: None, ..ProptestConfig::default() })]

    /// Configs: random values at every known field, and random documents.
    #[test]
    fn configs_parse_or_fail_with_a_message(
        field in prop::sample::select(&["duration", "nodes", "disk", "faults", "net", "limits", "determinism", "regressions", "name", "version", "extra"][..]),
        v in value(),
        sub in prop::sample::select(&["crash", "pause", "partition", "clock_skew", "io_latency", "fsync_latency", "latency", "memory_mb", "run_memory_mb", "output_mb", "watchdog_instructions", "model", "sector_bytes", "swarm", "replicas", "env", "capacity", "write_error", "disk_full"][..]),
        w in value(),
        doc in value(),
    ) {
        let path = Path::new("/fuzz/seedfall.json");
        let mut base: Value = serde_json::from_str(CONFIG).unwrap();
        base[field] = v;
        let _ = Config::parse(path, &base.to_string());
        // One level down too: a field of an object section, or of a node.
        let mut base: Value = serde_json::from_str(CONFIG).unwrap();
        for section in ["disk", "faults", "net", "limits"] {
            base[section][sub] = w.clone();
        }
        base["nodes"][0][sub] = w;
        let _ = Config::parse(path, &base.to_string());
        let _ = Config::parse(path, &doc.to_string());
    }
}

proptest! {
    // About a third are accepted (edge values are mostly out of range) and run.
    #![proptest_config(ProptestConfig { cases: 1200, failure_persistence: None, ..ProptestConfig::default() })]

    /// Schedule files: accepted ones run on the guest without a panic.
    #[test]
    fn schedules_parse_and_run_without_panics(faults in prop::collection::vec(fault(), 0..4), branches in prop::collection::vec(branch(), 0..2), seed in 0u64..1000) {
        thread_local! {
            static PROGRAM: (PathBuf, Program) = { let d = scratch(); let p = program(&d); (d, p) };
        }
        PROGRAM.with(|(_, program)| {
            let text = json!({ "version": 1, "config": "fz", "seed": seed, "faults": faults, "branches": branches }).to_string();
            if let Ok(file) = ScheduleFile::parse(&text, &program.config) {
                let outcome = seedfall_sim::run(program, &file.schedule(), &RunOptions::default());
                prop_assert!(outcome.end_time.nanos() <= 200_000_000, "the clock ran past the run's end: {}", outcome.end_time);
            }
            Ok(())
        })?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 60, failure_persistence: None, ..ProptestConfig::default() })]

    /// Pins and corpus entries are skipped with a reason when they do not
    /// fit, never fatal; the ones that fit replay.
    #[test]
    fn pins_and_corpus_entries_are_used_or_skipped(faults in prop::collection::vec(fault(), 0..3), junk in value(), seed in 0u64..100) {
        thread_local! {
            static PROGRAM: (PathBuf, Program) = { let d = scratch(); let p = program(&d); (d, p) };
        }
        PROGRAM.with(|(dir, program)| {
            let pins = dir.join("regressions");
            let _ = std::fs::remove_dir_all(&pins);
            std::fs::create_dir_all(&pins).unwrap();
            let pin = json!({ "version": 1, "name": "p", "config": "fz", "seed": seed, "faults": faults, "branches": [], "expected": { "kind": "exit", "node": "b", "message": "x" } });
            std::fs::write(pins.join("p.json"), pin.to_string()).unwrap();
            std::fs::write(pins.join("junk.json"), junk.to_string()).unwrap();
            let report = seedfall_search::pins::replay_all(program, 1);
            prop_assert_eq!(report.results.len() + report.skipped.len(), 2);
            prop_assert!(report.skipped.iter().any(|s| s.contains("junk.json")), "{:?}", report.skipped);

            let corpus = dir.join("corpus");
            let _ = std::fs::remove_dir_all(&corpus);
            std::fs::create_dir_all(&corpus).unwrap();
            let entry = json!({ "version": 1, "config": "fz", "id": "e", "seed": seed, "faults": faults, "branches": [], "end_ns": 1, "reached": [] });
            std::fs::write(corpus.join("e.json"), entry.to_string()).unwrap();
            std::fs::write(corpus.join("junk.json"), junk.to_string()).unwrap();
            let (entries, stale) = seedfall_search::explore::corpus::load(&corpus, &program.config);
            prop_assert_eq!(entries.len() + stale.len(), 2);
            for e in entries {
                let _ = seedfall_sim::run(program, &e.schedule(), &RunOptions::default());
            }
            Ok(())
        })?;
    }
}
