//! `-profile FILE`: a pprof profile of real guests' functions, per node
//! instance, that leaves every run as it was.
mod common;
use common::*;
use pprof::protos::{Message, Profile};
use std::collections::BTreeMap;
use std::path::Path;

/// Per node instance: function name -> (samples, instructions) where the
/// function is on the stack (cumulative), from a pprof file.
fn read_profile(path: &Path) -> BTreeMap<String, BTreeMap<String, (i64, i64)>> {
    let p = Profile::decode(std::fs::read(path).unwrap().as_slice()).unwrap();
    let s = |i: i64| p.string_table[i as usize].clone();
    assert_eq!(s(p.default_sample_type), "instructions");
    let mut out: BTreeMap<String, BTreeMap<String, (i64, i64)>> = BTreeMap::new();
    for sample in &p.sample {
        let names: Vec<String> = sample.location_id.iter().map(|l| s(p.function[p.location[*l as usize - 1].line[0].function_id as usize - 1].name)).collect();
        let node = names.last().unwrap().strip_prefix("node ").expect("every stack ends at its node").to_string();
        assert_eq!(s(sample.label[0].str), node);
        let per = out.entry(node).or_default();
        for n in names.into_iter().collect::<std::collections::BTreeSet<_>>() {
            let e = per.entry(n).or_default();
            e.0 += sample.value[0];
            e.1 += sample.value[1];
        }
    }
    out
}

/// Sampling is in real time (a tick every 250us), weighted by guest
/// instructions: a replay of a real Go cluster (examples/raftkv, about a
/// second) gets thousands of samples; a run of a few milliseconds, few.
#[test]
fn replay_profiles_a_go_raft_cluster_by_function_and_keeps_the_trace() {
    let cfg = repo().join("examples/raftkv/seedfall.json");
    let c = cfg.to_str().unwrap();
    let plain = json(&seedfall(&["replay", "-c", c, "-seed", "2", "-json"]));
    let file = scratch("guest-profile-replay").join("replay.pb");
    let out = seedfall(&["replay", "-c", c, "-seed", "2", "-json", "-profile", file.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let profiled = json(&out);
    assert_eq!(plain["trace_hash"], profiled["trace_hash"], "sampling must not change the run");
    assert!(out.stderr.contains("guest profile written to"), "{}", out.stderr);
    let p = read_profile(&file);
    assert_eq!(p.keys().cloned().collect::<Vec<_>>(), vec!["client", "raft#1", "raft#2", "raft#3"], "{p:?}");
    for (node, funcs) in &p {
        let (samples, instructions) = funcs[&format!("node {node}")];
        assert!(samples > 0 && instructions > 0, "{node}: {samples} samples, {instructions} instructions");
        // Go's names as the module has them: the runtime and the libraries.
        assert!(funcs.keys().any(|n| n.starts_with("runtime.")), "{node}: {:?}", funcs.keys().collect::<Vec<_>>());
    }
    let raft: Vec<&String> = p["raft#1"].keys().filter(|n| n.contains("hashicorp_raft")).collect();
    assert!(!raft.is_empty(), "{:?}", p["raft#1"].keys().collect::<Vec<_>>());
}

#[test]
fn run_profiles_a_seed_range_and_keeps_every_trace() {
    let nodes = [
        r#"{ "name": "server", "cargo": { "dir": "$GUESTS/rust-net" }, "args": ["server", "--port", "7000"], "workload": false }"#,
        r#"{ "name": "client", "cargo": { "dir": "$GUESTS/rust-net" }, "args": ["client", "--to", "server:7000", "--conns", "3", "--bytes", "10000"] }"#,
    ];
    let cfg = config("guest-profile-run", &format!(r#"{{ "duration": "5s", "nodes": [ {} ] }}"#, nodes.join(", ")));
    let c = cfg.to_str().unwrap();
    let file = cfg.with_file_name("run.pb");
    let plain = json(&seedfall(&["run", "-c", c, "-seeds", "1-200", "-j", "2", "-json", "-hashes"]));
    let out = seedfall(&["run", "-c", c, "-seeds", "1-200", "-j", "2", "-json", "-hashes", "-profile", file.to_str().unwrap()]);
    let profiled = json(&out);
    assert_eq!(plain["trace_hashes"], profiled["trace_hashes"]);
    let p = read_profile(&file);
    // The client checks every echoed byte: its own loop and memcmp.
    let client = &p["client"];
    assert!(client.contains_key("rust_net::client"), "{:?}", client.keys().collect::<Vec<_>>());
    assert!(client["rust_net::client"].1 * 2 > client["node client"].1, "{client:?}");
    // -profile without a file still only measures host calls.
    let timing = json(&seedfall(&["run", "-c", c, "-seeds", "1-5", "-json", "-profile"]));
    assert!(timing["totals"]["host_ns"].as_u64().unwrap() > 0, "{timing}");
    // A file where its folder should be: said, with the path, and exit 2.
    let bad_path = format!("{c}/p.pb");
    let bad = seedfall(&["replay", "-c", c, "-seed", "1", "-profile", &bad_path]);
    assert_eq!(bad.code, 2, "{}", bad.stderr);
    assert!(bad.stderr.contains(&format!("cannot write {bad_path}")), "{}", bad.stderr);
}
