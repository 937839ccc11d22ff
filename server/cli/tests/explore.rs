//! explore and run -until-novelty on the vault example and kvlog.
mod common;
use common::*;
use serde_json::Value;

fn vault_config(test: &str) -> std::path::PathBuf {
    let dir = scratch(test);
    let cfg = dir.join("seedfall.json");
    std::fs::write(&cfg, format!(r#"{{ "name": "vault", "duration": "2s", "nodes": [ {{ "name": "client", "replicas": 1, "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/explore").display())).unwrap();
    cfg
}

fn explore(cfg: &std::path::Path, extra: &[&str]) -> Value {
    let mut args = vec!["explore", "-c", cfg.to_str().unwrap(), "-seeds", "1-8", "-batch", "8", "-json"];
    if !extra.contains(&"-rounds") {
        args.extend_from_slice(&["-rounds", "60"]);
    }
    if !extra.contains(&"-until-novelty") {
        args.extend_from_slice(&["-until-novelty", "30"]);
    }
    args.extend_from_slice(extra);
    json(&seedfall(&args))
}

fn without_times(rounds: &Value) -> Vec<Value> {
    rounds.as_array().unwrap().iter().map(|r| {
        let mut r = r.clone();
        r.as_object_mut().unwrap().remove("elapsed_ms");
        r
    }).collect()
}

#[test]
fn explore_opens_the_vault_and_the_failure_replays() {
    let cfg = vault_config("explore-vault");
    let out = explore(&cfg, &["-explore-seed", "7"]);
    assert_eq!(out["stop"], "failure found", "{}", out["rounds"]);
    let f = &out["failures"][0];
    assert_eq!(f["nodes"][0]["message"], "the vault opened after 6 consecutive lucky draws");
    assert!(out["runs"].as_u64().unwrap() < 480);
    let news: Vec<String> = out["rounds"].as_array().unwrap().iter().flat_map(|r| r["new_signals"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string())).collect();
    for level in 1..=6 {
        assert!(news.contains(&format!("property \"level {level} reached\" = true")), "{news:?}");
    }
    assert!(out["rounds"][0]["functions"].as_u64().unwrap() > 100, "function coverage counts the Go runtime too");
    // The failure is an ordinary schedule (seed + branches) that replays exactly.
    let faults = repo().join(f["folder"].as_str().unwrap()).join("faults.json");
    let schedule: Value = serde_json::from_str(&std::fs::read_to_string(&faults).unwrap()).unwrap();
    assert!(!schedule["branches"].as_array().unwrap().is_empty());
    let replay = json(&seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], f["trace_hash"]);
}

#[test]
fn explore_rounds_do_not_depend_on_jobs() {
    let a_cfg = vault_config("explore-j1");
    let b_cfg = vault_config("explore-j2");
    let a = explore(&a_cfg, &["-explore-seed", "3", "-j", "1"]);
    let b = explore(&b_cfg, &["-explore-seed", "3", "-j", "2"]);
    assert_eq!(without_times(&a["rounds"]), without_times(&b["rounds"]));
    assert_eq!(a["stop"], b["stop"]);
    assert_eq!(a["failures"][0]["trace_hash"], b["failures"][0]["trace_hash"]);
}

#[test]
fn the_corpus_carries_over_and_stale_entries_are_counted() {
    let cfg = vault_config("explore-corpus");
    let first = explore(&cfg, &["-explore-seed", "2", "-rounds", "4", "-until-novelty", "10"]);
    let corpus = cfg.parent().unwrap().join(".seedfall/corpus/vault");
    let entries: Vec<_> = std::fs::read_dir(&corpus).unwrap().flatten().collect();
    assert_eq!(entries.len() as u64, first["rounds"].as_array().unwrap().last().unwrap()["corpus"].as_u64().unwrap());
    // A stale entry (a node the config does not have) and an unreadable one.
    std::fs::write(corpus.join("9-stale.json"), r#"{"version":1,"config":"vault","id":"x","seed":9,"faults":[{"kind":"pause","node":"ghost","at_ns":1,"duration_ns":1}],"branches":[],"end_ns":5,"reached":[]}"#).unwrap();
    std::fs::write(corpus.join("9-junk.json"), "{").unwrap();
    let second = explore(&cfg, &["-explore-seed", "2", "-rounds", "1"]);
    assert_eq!(second["stale_corpus_entries"].as_array().unwrap().len(), 2, "{}", second["stale_corpus_entries"]);
    assert_eq!(second["rounds"][0]["runs"].as_u64().unwrap(), 8 + entries.len() as u64, "round 1 replays the seeds and the corpus");
}

#[test]
fn until_novelty_stops_at_the_same_point_at_any_jobs_with_unchanged_verdicts() {
    let args = |j: &'static str| vec!["run", "-c", "examples/kvlog/seedfall.json", "-seeds", "1-2000", "-until-novelty", "3", "-batch", "20", "-json", "-hashes", "-j", j];
    let a = json(&seedfall(&args("1")));
    let b = json(&seedfall(&args("2")));
    assert_eq!(a["exploration"], b["exploration"]);
    assert_eq!(a["trace_hashes"], b["trace_hashes"]);
    let runs = a["runs"].as_u64().unwrap();
    assert!(runs < 2000 && runs % 20 == 0, "{runs}");
    assert!(a["exploration"]["stop"].as_str().unwrap().starts_with("no novelty for 3 batches"));
    let growth = a["exploration"]["growth"].as_array().unwrap();
    assert_eq!(growth.last().unwrap()["runs"].as_u64().unwrap(), runs);
    // Verdicts per seed are those of a plain sweep of the same seeds.
    let plain = json(&seedfall(&["run", "-c", "examples/kvlog/seedfall.json", "-seeds", &format!("1-{runs}"), "-json", "-hashes"]));
    assert_eq!(plain["trace_hashes"], a["trace_hashes"]);
    let seeds = |d: &Value| d["failures"].as_array().unwrap().iter().map(|f| f["seed"].as_u64().unwrap()).collect::<Vec<_>>();
    assert_eq!(seeds(&plain), seeds(&a));
}

/// An ordinary Go program with no seedfall SDK (examples/explore-coverage):
/// two 1-in-400 draws in sequence, progress visible only as functions
/// entered. Plain odds 1 in 160,000; on coverage alone, explore branches
/// just after stageOne is first entered and pays for the two draws one
/// after the other.
#[test]
fn explore_opens_the_two_lock_door_on_function_coverage_alone() {
    let dir = scratch("explore-coverage");
    let corpus = dir.join("corpus");
    let out = json(&seedfall(&["explore", "-c", "examples/explore-coverage/seedfall.json", "-corpus", corpus.to_str().unwrap(), "-rounds", "1000", "-json"]));
    assert_eq!(out["stop"], "failure found", "{}", out["rounds"]);
    let n = out["first_failure_run"].as_u64().unwrap();
    assert!(n < 3000, "found at run {n}");
    let f = &out["failures"][0];
    assert!(f["nodes"][0]["message"].as_str().unwrap().contains("both locks opened"), "{f}");
    let faults = repo().join(f["folder"].as_str().unwrap()).join("faults.json");
    let replay = json(&seedfall(&["replay", "-c", "examples/explore-coverage/seedfall.json", "-faults", faults.to_str().unwrap(), "-json"]));
    assert_eq!(replay["trace_hash"], f["trace_hash"]);
}

/// -rounds is a promise unless -until-novelty is given; with no limit at
/// all the default rule stops and says so.
#[test]
fn explicit_rounds_are_honoured_and_the_stop_reason_names_the_rule() {
    let dir = scratch("explore-stop");
    let c = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let cfg = "examples/kvlog/seedfall.fixed.json";
    let full = json(&seedfall(&["explore", "-c", cfg, "-corpus", &c("a"), "-rounds", "40", "-json"]));
    assert_eq!(full["stop"], "rounds limit reached (-rounds 40)");
    assert_eq!(full["rounds"].as_array().unwrap().len(), 40);
    let early = json(&seedfall(&["explore", "-c", cfg, "-corpus", &c("b"), "-rounds", "40", "-until-novelty", "2", "-json"]));
    assert!(early["stop"].as_str().unwrap().starts_with("no novelty for 2 rounds (-until-novelty 2)"), "{}", early["stop"]);
    assert!(early["rounds"].as_array().unwrap().len() < 40);
    let default = json(&seedfall(&["explore", "-c", cfg, "-corpus", &c("c"), "-json"]));
    let why = default["stop"].as_str().unwrap();
    assert!(why.contains("the default rule"), "{why}");
    assert!(default["rounds"].as_array().unwrap().len() >= 9, "at least 8 quiet rounds after the last novelty");
    assert_eq!(seedfall(&["explore", "-c", cfg, "-until-novelty", "0"]).code, 2);
    let zero = seedfall(&["explore", "-c", cfg, "-rounds", "0"]);
    assert_eq!(zero.code, 2);
    assert!(zero.stderr.contains("-rounds: expected 1 to 100000, found 0"), "{}", zero.stderr);
}

/// -coverage edges explores on edge probes; what it keeps replays: on the
/// ordinary program when the failure happens there too, else under the
/// probes (`replay -coverage edges`), as the printed command says.
#[test]
fn explore_on_edges_keeps_failures_that_replay() {
    let cfg = vault_config("explore-edges");
    let out = explore(&cfg, &["-coverage", "edges", "-explore-seed", "2", "-rounds", "200", "-until-novelty", "200"]);
    assert_eq!(out["stop"], "failure found", "{}", out["rounds"]);
    assert!(out["rounds"].as_array().unwrap().iter().any(|r| r["edges"].as_u64().unwrap() > 1000), "edges are counted");
    let (list, coverage) = match out["failures"].as_array().unwrap().first() {
        Some(_) => ("failures", "functions"),
        None => ("unconfirmed_failures", "edges"),
    };
    let f = &out[list][0];
    let faults = repo().join(f["folder"].as_str().unwrap()).join("faults.json");
    let replay = seedfall(&["replay", "-c", cfg.to_str().unwrap(), "-faults", faults.to_str().unwrap(), "-coverage", coverage, "-json"]);
    assert_eq!(json(&replay)["trace_hash"], f["trace_hash"], "{list}");
    let text = seedfall(&["explore", "-c", cfg.to_str().unwrap(), "-coverage", "edges", "-explore-seed", "2", "-rounds", "200", "-until-novelty", "200", "-corpus", scratch("explore-edges-text").to_str().unwrap()]);
    if coverage == "edges" {
        assert!(text.stdout.contains("found under edge probes only") && text.stdout.contains("-coverage edges\n"), "{}", text.stdout);
    }
    assert_eq!(seedfall(&["explore", "-c", cfg.to_str().unwrap(), "-coverage", "blocks"]).code, 2);
}
