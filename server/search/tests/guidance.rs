//! Numeric guidance on real guests: the watermarks a run's `Outcome` holds
//! from `sim.Maximize`/`sim.Minimize` (Go), `seedfall::maximize!`/
//! `minimize!` (Rust), the numeric properties of both SDKs (the comparison in
//! the `assert` kind's bits 8-15, `left - right` from the details), and the
//! Antithesis Go SDK's `antithesis_guidance` lines.
use seedfall_search::load;
use seedfall_sim::{run, Outcome, RunOptions, Schedule, Watermark};
use std::path::Path;

fn outcome(config: &str, seed: u64) -> Outcome {
    std::env::set_var("SEEDFALL_CACHE_DIR", Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/seedfall-test-cache"));
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/guests").join(config);
    let p = load(&config, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    run(&p.program, &Schedule::seed(seed), &RunOptions::default())
}

fn mark<'a>(o: &'a Outcome, name: &str, maximize: bool) -> &'a Watermark {
    o.watermarks.iter().find(|w| w.name == name && w.maximize == maximize).unwrap_or_else(|| panic!("no watermark {name} maximize={maximize}: {:#?}", o.watermarks))
}

fn first_hit(o: &Outcome, message: &str) -> u64 {
    o.properties.get(message).unwrap_or_else(|| panic!("no property {message}")).first_hit_ns
}

/// Checks the watermarks of one language's guest (names prefixed `lang`).
fn check_guest(o: &Outcome, lang: &str) {
    let level = format!("{lang} level");
    // Maximize 3, 7, 5 a millisecond apart: 7, when the 7 was reported
    // (just after the reachable that precedes it); Minimize: 3, at the first.
    let (max, min) = (mark(o, &level, true), mark(o, &level, false));
    assert_eq!((max.value, min.value), (7.0, 3.0), "{lang}");
    let (hit7, hit3) = (first_hit(o, &format!("{lang} level 7")), first_hit(o, &format!("{lang} level 3")));
    assert!(hit7 <= max.at_ns && max.at_ns - hit7 < 100_000, "{lang}: the 7 at {} ns, its marker at {hit7} ns", max.at_ns);
    assert!(hit3 <= min.at_ns && min.at_ns - hit3 < 100_000, "{lang}: the 3 at {} ns, its marker at {hit3} ns", min.at_ns);
    assert!(max.at_ns - min.at_ns >= 1_000_000, "{lang}: a millisecond's sleep between the 3 and the 7");
    assert!(max.step > min.step, "{lang}: the sleep is a scheduler step");
    // The numeric properties over x = 2, 8, 4 (a millisecond apart), each
    // `left - right` guided toward where it would fail or come true.
    let below = mark(o, &format!("{lang} x below 10"), true); // AlwaysLessThan(x, 10): maximize x - 10
    let not_negative = mark(o, &format!("{lang} x not negative"), false); // AlwaysGreaterThanOrEqualTo(x, 0): minimize
    let above = mark(o, &format!("{lang} x above 100"), true); // SometimesGreaterThan(x, 100): maximize
    let at_most = mark(o, &format!("{lang} x at most 1"), false); // SometimesLessThanOrEqualTo(x, 1): minimize
    assert_eq!((below.value, not_negative.value, above.value, at_most.value), (-2.0, 2.0, -92.0, 1.0), "{lang}");
    // Each at its evaluation: just after the marker of that x (x = 8 for
    // the maximized ones, x = 2 for the minimized), before the next sleep.
    let (hit2, hit8) = (first_hit(o, &format!("{lang} x is 2")), first_hit(o, &format!("{lang} x is 8")));
    assert!(hit8 - hit2 >= 1_000_000, "{lang}: a millisecond's sleep between x = 2 and x = 8");
    for (w, hit, x) in [(below, hit8, 8), (above, hit8, 8), (not_negative, hit2, 2), (at_most, hit2, 2)] {
        assert!(hit <= w.at_ns && w.at_ns - hit < 1_000_000, "{lang} {}: at {} ns, the x = {x} marker at {hit} ns", w.name, w.at_ns);
    }
    for (name, maximize) in [("x below 10", false), ("x not negative", true), ("x above 100", false), ("x at most 1", true)] {
        assert!(!o.watermarks.iter().any(|w| w.name == format!("{lang} {name}") && w.maximize == maximize), "{lang} {name}: one direction only");
    }
    // The properties themselves are as before.
    for (name, trues) in [("x below 10", 3), ("x not negative", 3), ("x above 100", 0), ("x at most 1", 0)] {
        let p = &o.properties[&format!("{lang} {name}")];
        assert_eq!((p.hits, p.trues), (3, trues), "{lang} {name}");
    }
}

#[test]
fn go_and_rust_guests_leave_watermarks_in_the_outcome() {
    let o = outcome("guide.json", 1);
    assert!(o.failure.is_none(), "{:?}", o.failure);
    check_guest(&o, "go");
    check_guest(&o, "rust");
    // One watermark over every node instance: the Go node maximizes "both
    // levels" with 4, the Rust node with 6.
    assert_eq!(mark(&o, "both levels", true).value, 6.0);
    assert_eq!(o.watermarks_dropped, 0);
    let mut sorted = o.watermarks.clone();
    sorted.sort_by(|a, b| (&a.name, a.maximize).cmp(&(&b.name, b.maximize)));
    assert_eq!(o.watermarks, sorted, "sorted by (name, maximize)");
    assert_eq!(o.watermarks.len(), 2 * (2 + 4) + 1);
    // Watermarks are part of the run: the same schedule gives the same ones.
    assert_eq!(outcome("guide.json", 1).watermarks, o.watermarks);
}

#[test]
fn antithesis_sdk_numeric_assertions_leave_watermarks() {
    for seed in 1..=3 {
        let o = outcome("antithesis.json", seed);
        // x = random % 10, printed by the guest; its AlwaysLessThan(x, 10)
        // writes a guidance line (maximize x - 10).
        let x: f64 = o
            .trace
            .iter()
            .find_map(|e| serde_json::to_value(e).ok()?.get("text")?.as_str()?.strip_prefix("x = ")?.parse().ok())
            .expect("the guest prints x");
        if x >= 9.0 {
            continue; // "antithesis x stays below 9" failed first
        }
        let w = mark(&o, "antithesis x below 10", true);
        assert_eq!(w.value, x - 10.0, "seed {seed}");
        assert!(w.at_ns >= first_hit(&o, "antithesis x below 10"));
        assert_eq!(o.properties["antithesis x below 10"].trues, 1);
        assert_eq!(o.watermarks.len(), 1, "{:?}", o.watermarks);
    }
}
