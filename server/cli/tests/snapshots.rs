//! Snapshots are exact: a run continued from a snapshot of its parent has
//! the same outcome and trace hash as the same schedule from scratch, for
//! every example and test config, at many branch points; and the commands
//! that use snapshots print the same with `-snapshots off`.
mod common;
use common::*;
use seedfall_search::snapshots::Snapshots;
use seedfall_search::target::{exact, Parents};
use seedfall_sim::schedule::Prefix;
use seedfall_sim::{Branch, Outcome, RunOptions, Schedule};
use std::sync::atomic::AtomicBool;

/// Each config, the seeds tried, and the branch points per seed.
const CONFIGS: &[(&str, &[u64], u64)] = &[
    ("examples/ledger/seedfall.json", &[1, 2, 3], 6),
    ("examples/kvlog/seedfall.json", &[2, 5, 9], 6),
    ("examples/kvlog/seedfall.fixed.json", &[1, 4], 6),
    ("examples/explore/seedfall.json", &[1, 7], 6),
    ("examples/explore/seedfall.rust.json", &[1, 2], 6),
    ("examples/explore-coverage/seedfall.json", &[1, 2], 6),
    ("examples/explore-climb/seedfall.json", &[1, 2], 6),
    ("examples/httpkv/seedfall.json", &[1, 3], 6),
    ("examples/httpkv/seedfall.fixed.json", &[2], 6),
    ("examples/walkv/seedfall.json", &[1, 2], 5),
    ("examples/walkv/seedfall.posix.json", &[1], 4),
    ("examples/walkv/seedfall.fixed.json", &[1], 4),
    ("examples/sqlitekv/seedfall.json", &[1], 4),
    ("examples/jetstream/seedfall.json", &[1], 4),
    ("examples/raftkv/seedfall.json", &[1], 3),
    ("examples/raftkv/seedfall.broken.json", &[1], 2),
    ("examples/raftkv/seedfall.settled.json", &[1], 2),
    ("examples/raftkv/seedfall.settled-broken.json", &[1], 2),
    ("tests/guests/basics.json", &[1, 2, 3], 6),
    ("tests/guests/props.json", &[1, 2], 6),
    ("tests/guests/antithesis.json", &[1, 2], 6),
    ("tests/guests/net.json", &[1, 2], 6),
    ("tests/guests/disk.json", &[1, 2], 6),
    ("tests/guests/storage.json", &[1, 2], 6),
    ("tests/guests/guide.json", &[1], 6),
    ("tests/guests/failures.json", &[1, 2], 4),
];

fn all_streams() -> Vec<String> {
    seedfall_sim::streams::Stream::ALL.iter().map(|s| s.name().to_string()).collect()
}

/// Everything an outcome says but the host's timings.
fn same(a: &Outcome, b: &Outcome, what: &str) {
    assert_eq!(a.trace_hash, b.trace_hash, "{what}: trace hash");
    assert_eq!(a.schedule, b.schedule, "{what}: schedule");
    assert_eq!((a.seed, a.verdict, a.end, a.end_time), (b.seed, b.verdict, b.end, b.end_time), "{what}");
    assert_eq!(a.failure, b.failure, "{what}: failure");
    assert_eq!(a.stats.steps, b.stats.steps, "{what}: steps");
    assert_eq!(a.properties, b.properties, "{what}: properties");
    assert_eq!(a.coverage, b.coverage, "{what}: coverage");
    assert_eq!(a.edges, b.edges, "{what}: edges");
    assert_eq!(a.watermarks, b.watermarks, "{what}: watermarks");
    assert_eq!(a.stream_draws, b.stream_draws, "{what}: stream draws");
    assert_eq!(a.setup_complete_ns, b.setup_complete_ns, "{what}: setup");
    assert_eq!(a.trace, b.trace, "{what}: trace");
}

#[test]
fn every_config_continues_from_snapshots_exactly() {
    std::env::set_var("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"));
    let mut children_total = 0;
    for &(cfg, seeds, moments) in CONFIGS {
        let path = repo().join(cfg);
        let project = seedfall_search::load(&path, &mut |_| {}).unwrap_or_else(|e| panic!("{cfg}: {e}"));
        let program = &project.program;
        let argv = ["snapshot-runner".to_string(), "--config".into(), path.display().to_string()];
        let snapshots = Snapshots::start(env!("CARGO_BIN_EXE_seedfall").as_ref(), &argv, &program.config.limits, 4 << 30).unwrap();
        let (mut parents, mut children) = (Vec::new(), Vec::new());
        for &seed in seeds {
            let plain = Schedule::seed(seed);
            let first = seedfall_sim::run(program, &plain, &RunOptions::default());
            let end = first.end_time.nanos().max(moments + 2);
            let replay = exact(&first);
            for i in 1..=moments {
                let t = end * i / (moments + 1);
                let key = seed << 8 | i;
                // Every stream re-keyed, from the rates (the seed's own run)
                // and from the run's exact faults (explore's and cause's).
                for base in [&plain, &replay] {
                    let mut child = base.clone();
                    child.branches.push(Branch { at_ns: t, streams: all_streams(), key });
                    parents.push(Some(base.clone()));
                    children.push(child);
                }
                // One stream re-keyed.
                let mut one = replay.clone();
                one.branches.push(Branch { at_ns: t, streams: vec!["sched".into()], key });
                parents.push(Some(replay.clone()));
                children.push(one.clone());
                // A child of a child, from a snapshot of the child.
                let mut grandchild = one.clone();
                grandchild.branches.push(Branch { at_ns: t + (end - t) / 2, streams: all_streams(), key: key + 1 });
                parents.push(Some(one));
                children.push(grandchild);
                // `run -from`: another seed sharing this seed's prefix.
                parents.push(Some(plain.clone()));
                children.push(Schedule { prefix: Some(Prefix { seed, at_ns: t, setup: false }), ..Schedule::seed(seed + 1000 * i) });
            }
        }
        let mut from_snapshots = Vec::new();
        let of = parents.clone();
        seedfall_search::target::run_each_from(program, Some(Parents { snapshots: &snapshots, of: &of }), &children, 2, true, &AtomicBool::new(false), |o| {
            from_snapshots.push(o);
            true
        });
        for (child, got) in children.iter().zip(&from_snapshots) {
            let mut want = seedfall_sim::run(program, child, &RunOptions::default());
            // A passing run keeps its crashes (explore's signals read them).
            if want.verdict == seedfall_sim::Verdict::Pass {
                seedfall_search::target::keep_signal_events(&mut want.trace);
            }
            same(got, &want, &format!("{cfg} {child:?}"));
        }
        // A moment the parent never reached (its clock jumped from before
        // it to the end) has no snapshot: those children run from scratch,
        // and say why. Every other child came from a snapshot.
        let report = snapshots.report();
        let unreached: u64 = report.from_scratch.iter().filter(|(why, _)| why.starts_with("the run never reached")).map(|(_, n)| n).sum();
        assert_eq!(report.scratch_runs(), unreached, "{cfg}: {report:?}");
        assert_eq!(report.children + unreached, children.len() as u64, "{cfg}");
        assert!(report.children * 2 > children.len() as u64, "{cfg}: most children from snapshots: {report:?}");
        children_total += report.children;
    }
    eprintln!("{children_total} children continued from snapshots, each the same as from scratch");
    assert!(children_total > 1000, "{children_total} children");
}

/// A JSON document without its wall-clock figures (and the corpus folder,
/// which each run of a test names apart).
fn timeless(v: &serde_json::Value) -> serde_json::Value {
    const HOST: &[&str] = &["real_ns", "elapsed_ms", "seeds_per_second", "virtual_seconds_per_wall_second", "totals", "corpus", "wall_ns", "run_real_ns", "instantiate_ns", "host_ns"];
    match v {
        serde_json::Value::Object(m) => m.iter().filter(|(k, _)| !HOST.contains(&k.as_str())).map(|(k, v)| (k.clone(), timeless(v))).collect(),
        serde_json::Value::Array(a) => a.iter().map(timeless).collect(),
        other => other.clone(),
    }
}

fn kvlog() -> String {
    repo().join("examples/kvlog/seedfall.json").display().to_string()
}

#[test]
fn run_from_setup_prints_the_same_without_snapshots_and_its_failures_replay() {
    let cfg = kvlog();
    let on = seedfall(&["run", "-c", &cfg, "-seeds", "1-60", "-from", "setup", "-json", "-hashes"]);
    let off = seedfall(&["run", "-c", &cfg, "-seeds", "1-60", "-from", "setup", "-json", "-hashes", "-snapshots", "off"]);
    assert!(on.stderr.contains("snapshots: 1 taken"), "{}", on.stderr);
    assert!(on.stderr.contains("60 runs continued from one"), "{}", on.stderr);
    let (a, b) = (json(&on), json(&off));
    assert_eq!(timeless(&a), timeless(&b));
    let failures = a["failures"].as_array().unwrap();
    assert!(!failures.is_empty(), "kvlog fails after setup too");
    let hashes: std::collections::BTreeMap<u64, String> = a["trace_hashes"].as_array().unwrap().iter().map(|h| (h[0].as_u64().unwrap(), h[1].as_str().unwrap().to_string())).collect();
    let kept: Vec<&serde_json::Value> = failures.iter().filter(|f| f["folder"].is_string()).collect();
    assert!(!kept.is_empty());
    for f in kept {
        let seed = f["seed"].as_u64().unwrap();
        let folder = repo().join(f["folder"].as_str().unwrap());
        let schedule: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(folder.join("faults.json")).unwrap()).unwrap();
        assert_eq!(schedule["prefix"]["seed"], 1, "the schedule file records the snapshot point: {schedule}");
        assert_eq!(schedule["prefix"]["setup"], true, "{schedule}");
        let r = seedfall(&["replay", "-c", &cfg, "-faults", folder.join("faults.json").to_str().unwrap()]);
        assert!(r.stdout.contains(&format!("trace hash {}", hashes[&seed])), "seed {seed} replays without a snapshot:\n{}", r.stdout);
    }
}

#[test]
fn cause_and_explore_print_the_same_without_snapshots() {
    let cfg = kvlog();
    let on = seedfall(&["cause", "-c", &cfg, "-seed", "9", "-snapshots", "always"]);
    let off = seedfall(&["cause", "-c", &cfg, "-seed", "9", "-snapshots", "off"]);
    assert!(on.stderr.contains("runs continued from one"), "{}", on.stderr);
    assert_eq!(on.stdout, off.stdout);
    let vault = repo().join("examples/explore/seedfall.json").display().to_string();
    let corpus = scratch("snapshots-explore");
    let run = |mode: &str| {
        let dir = corpus.join(mode);
        seedfall(&["explore", "-c", &vault, "-explore-seed", "3", "-corpus", dir.to_str().unwrap(), "-snapshots", mode, "-json"])
    };
    let (on, off) = (run("always"), run("off"));
    assert!(on.stderr.contains("runs continued from one"), "{}", on.stderr);
    assert_eq!(timeless(&json(&on)), timeless(&json(&off)));
    // Under edge probes the runner loads the probed program too.
    let edges = |mode: &str| {
        let dir = corpus.join(format!("edges-{mode}"));
        seedfall(&["explore", "-c", &vault, "-explore-seed", "2", "-coverage", "edges", "-corpus", dir.to_str().unwrap(), "-snapshots", mode, "-json"])
    };
    let (on, off) = (edges("always"), edges("off"));
    assert!(on.stderr.contains("runs continued from one"), "{}", on.stderr);
    assert_eq!(timeless(&json(&on)), timeless(&json(&off)));
}

#[test]
fn short_runs_do_not_start_snapshots_unless_asked() {
    let out = seedfall(&["cause", "-c", &kvlog(), "-seed", "9"]);
    assert!(out.stderr.contains("snapshots: not used: these runs take under 20 ms"), "{}", out.stderr);
}

#[test]
fn from_a_moment_past_the_prefix_run_s_end_is_refused() {
    // The ledger's seed 1 ends within milliseconds (every teller done), far
    // before 1.5s: a sweep from there would be seed 1's run again and again.
    let cfg = config("from-past-end", &format!(r#"{{ "version": 1, "name": "ledger", "duration": "2s", "nodes": [ {{ "name": "bank", "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/ledger").display()));
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-20", "-from", "1500ms"]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stderr.contains("-from 1.500000000s: seed 1's run ends at") && out.stderr.contains("before it: every seed would be that run again"), "{}", out.stderr);
    assert!(!out.stdout.contains("20 runs"), "no sweep of identical runs: {}", out.stdout);
}
