//! Timed function coverage on a real guest (examples/explore-coverage, an
//! ordinary Go program with no seedfall SDK): a function's first entry is
//! placed in virtual time to the nearest host call, so exploration can
//! branch just after it, and a child branched there replays the rare prefix
//! exactly and re-rolls what comes after.
use seedfall_search::explore::signals::{self, Signal};
use seedfall_search::load;
use seedfall_sim::{run, Branch, Outcome, RunOptions, Schedule};
use std::path::Path;

fn program() -> seedfall_search::Project {
    std::env::set_var("SEEDFALL_CACHE_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/seedfall-test-cache"));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/explore-coverage/seedfall.json");
    load(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// When `name` (a Go function) was first entered in this run, if it was.
fn entered(p: &seedfall_search::Project, o: &Outcome, name: &str) -> Option<u64> {
    let names = &p.program.function_names["door"];
    let index = names.iter().find(|(_, n)| n.as_str() == name).map(|(i, _)| *i).unwrap_or_else(|| panic!("no function {name}"));
    signals::of(o).into_iter().find(|r| r.signal == Signal::Function { node: "door".into(), index }).and_then(|r| r.at_ns)
}

#[test]
fn a_first_entry_has_a_time_and_a_child_branched_after_it_keeps_it() {
    let p = program();
    let opts = RunOptions::default();
    // Stage one is 1 in 400: the first seed to reach it.
    let (seed, first) = (1..4000u64)
        .find_map(|s| {
            let o = run(&p.program, &Schedule::seed(s), &opts);
            entered(&p, &o, "main.stageOne").map(|t| (s, (o, t)))
        })
        .expect("some seed in 4000 reaches stage one");
    let (o, t) = first;
    let main_at = entered(&p, &o, "main.main").unwrap();
    // main runs at once; stage one after the 2 ms walk to the door.
    assert!(t >= main_at + 2_000_000, "seed {seed}: stageOne at {t} ns, main at {main_at} ns");
    assert!(t < o.end_time.nanos());
    assert_eq!(entered(&p, &o, "main.stageTwo"), None, "seed {seed} would have failed");
    // Children branched just after that moment, every stream re-keyed:
    // stage one at the very same time (the prefix replays), and a new
    // second draw: about one child in 400 opens the second lock too.
    let all: Vec<String> = seedfall_sim::streams::Stream::ALL.iter().map(|s| s.name().to_string()).collect();
    let mut opened = None;
    for key in 1..=4000u64 {
        let child = Schedule { seed, faults: None, branches: vec![Branch { at_ns: t + 1, streams: all.clone(), key: key * 2 + 1 }], prefix: None };
        let c = run(&p.program, &child, &opts);
        assert_eq!(entered(&p, &c, "main.stageOne"), Some(t), "key {key}: the prefix replays exactly");
        if entered(&p, &c, "main.stageTwo").is_some() {
            assert_eq!(c.verdict, seedfall_sim::Verdict::Fail, "both locks open: the program panics");
            opened = Some(key);
            break;
        }
    }
    assert!(opened.is_some_and(|k| k > 1), "a branch after stage one re-rolls the second draw: {opened:?}");
}
