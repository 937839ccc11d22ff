//! examples/jetstream: a real embedded nats-server (JetStream, file store, SyncAlways) and a real nats.go client lose an acknowledged stream to one crash, and NATS's own Antithesis assertions show up as seedfall properties.
mod common;
use common::*;

const CFG: &str = "examples/jetstream/seedfall.json";
const STATIC: &str = "examples/jetstream/seedfall.static.json";
const ANTITHESIS: &str = "examples/jetstream/seedfall.antithesis.json";

fn property<'a>(out: &'a serde_json::Value, message: &str) -> &'a serde_json::Value {
    out["properties"].as_array().unwrap().iter().find(|p| p["message"] == message).unwrap_or_else(|| panic!("no property {message:?} in {}", out["properties"]))
}

#[test]
fn a_short_sweep_checks_recovery_and_finds_the_lost_stream() {
    let out = seedfall(&["run", "-c", CFG, "-seeds", "21-40", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    // The checks ran after crashes (the server restarted and recovered).
    for message in ["the acknowledged stream survives crashes", "acknowledged messages survive crashes", "the acknowledged stream configuration survives crashes"] {
        let p = property(&out, message);
        assert!(p["runs_hit"].as_u64().unwrap() > 0, "{p}");
    }
    // Every failure of the sweep is the same finding: the stream is gone
    // after a restart, and it needs no torn write (see the README).
    let failures = out["failures"].as_array().unwrap();
    assert!(!failures.is_empty());
    for f in failures {
        assert_eq!(f["nodes"][0]["node"], "nats", "{f}");
        assert_eq!(f["nodes"][0]["message"], "the acknowledged stream survives crashes", "{f}");
    }
}

#[test]
fn one_crash_between_meta_inf_and_meta_sum_loses_the_stream() {
    let run = json(&seedfall(&["run", "-c", CFG, "-seeds", "24", "-json"]));
    let f = &run["failures"][0];
    assert_eq!(f["nodes"][0]["message"], "the acknowledged stream survives crashes", "{f}");
    let shrink = seedfall(&["shrink", "-c", CFG, "-seed", "24"]);
    assert_eq!(shrink.code, 0, "{}", shrink.stderr);
    let shrunk = shrink.stdout.lines().find_map(|l| l.strip_prefix("wrote ")).expect("shrink names its file").to_string();
    let schedule: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(repo().join(&shrunk)).unwrap()).unwrap();
    let faults = schedule["faults"].as_array().unwrap();
    assert_eq!(faults.len(), 1, "one fault is enough: {schedule}");
    assert_eq!(faults[0]["kind"], "crash");
    assert_eq!(faults[0]["torn"], false, "no torn write needed: {schedule}");
    // The shrunk schedule replays to the same loss, and the server says why.
    let path = repo().join(&shrunk);
    let inspect = seedfall(&["inspect", "-c", CFG, "-faults", path.to_str().unwrap(), "-node", "nats", "-kind", "crash,output,failure"]);
    assert_eq!(inspect.code, 1, "{}", inspect.stderr);
    assert!(inspect.stdout.contains("rename undone: /data/js/jetstream/$G/streams/ORDERS/meta.sum is /data/js/jetstream/$G/streams/ORDERS/meta.sum.tmp again"), "{}", inspect.stdout);
    assert!(inspect.stdout.contains("checksums do not match"), "{}", inspect.stdout);
}

#[test]
fn two_crashes_around_stream_create_lose_the_stream_without_any_update() {
    // The hand-written schedule of the README: a crash between meta.inf and
    // meta.sum while the stream is created, the client's retried create
    // (acknowledged, and writing no meta.sum), then any later crash.
    let schedule = "examples/jetstream/schedules/create-then-crash.json";
    let replay = seedfall(&["replay", "-c", STATIC, "-faults", schedule, "-json"]);
    assert_eq!(replay.code, 1, "{}", replay.stderr);
    let inspect = seedfall(&["inspect", "-c", STATIC, "-faults", schedule, "-node", "nats", "-kind", "output,failure"]);
    assert_eq!(inspect.code, 1, "{}", inspect.stderr);
    assert_eq!(inspect.stdout.matches("Missing stream checksum file").count(), 2, "{}", inspect.stdout);
    assert!(inspect.stdout.contains("FAILED: always property false: the acknowledged stream survives crashes"), "{}", inspect.stdout);
    // Without updates and with random crashes, the sweep passes: the
    // window needs the two faults in that order.
    let out = seedfall(&["run", "-c", STATIC, "-seeds", "1-20", "-json"]);
    assert_eq!(out.code, 0, "{}", out.stdout);
    let out = json(&out);
    assert_eq!(property(&out, "acknowledged messages survive crashes")["runs_hit"], 20);
}

#[test]
fn nats_antithesis_assertion_is_a_seedfall_property() {
    let out = seedfall(&["run", "-c", ANTITHESIS, "-seeds", "1-3", "-json"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let out = json(&out);
    let p = property(&out, "Filestore msg block encountered sync error");
    assert_eq!(p["kind"], "unreachable", "{p}");
    assert!(p["runs_hit"].as_u64().unwrap() > 0, "{p}");
    assert!(p["location"].as_str().unwrap_or_default().contains("nats-server/v2@v2.15.2/server/filestore.go"), "{p}");
    let f = out["failures"].as_array().unwrap().iter().find(|f| f["nodes"][0]["message"] == "Filestore msg block encountered sync error").expect("a run failed on it");
    assert_eq!(f["nodes"][0]["node"], "nats", "{f}");
}

#[test]
fn the_sweep_is_the_same_at_any_jobs() {
    let runs: Vec<serde_json::Value> = ["1", "2"].iter().map(|j| json(&seedfall(&["run", "-c", CFG, "-seeds", "21-26", "-j", j, "-json"]))).collect();
    let key = |out: &serde_json::Value| {
        let failures: Vec<(u64, String)> = out["failures"].as_array().unwrap().iter().map(|f| (f["seed"].as_u64().unwrap(), f["trace_hash"].as_str().unwrap().to_string())).collect();
        (failures, out["totals"]["steps"].clone(), out["totals"]["virtual_ns"].clone(), out["totals"]["host_calls"].clone())
    };
    assert!(!runs[0]["failures"].as_array().unwrap().is_empty(), "seed 21 fails");
    assert_eq!(key(&runs[0]), key(&runs[1]));
}
