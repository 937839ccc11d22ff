//! Triage reports (-report, HTML and Markdown) with findings tracked across
//! reports, and CPU profiles (-cpuprofile) readable by `go tool pprof`.
mod common;
use common::*;

fn kvlog(dir: &std::path::Path, fixed: bool) -> std::path::PathBuf {
    let cfg = dir.join("seedfall.json");
    let args = if fixed { r#", "args": ["-fixed"]"# } else { "" };
    std::fs::write(&cfg, format!(
        r#"{{ "name": "kvrep", "duration": "3s", "nodes": [ {{ "name": "kv", "go": {{ "dir": "{}" }}{args} }} ],
             "faults": {{ "crash": {{ "rate": 2, "restart_after": "5ms-50ms", "during_disk_op": 0.5 }}, "torn_writes": true }} }}"#,
        repo().join("examples/kvlog").display()
    )).unwrap();
    cfg
}

#[test]
fn findings_go_new_ongoing_resolved_regressed() {
    let dir = scratch("report-findings");
    let md = dir.join("report.md");
    let report = |fixed: bool| {
        let cfg = kvlog(&dir, fixed);
        let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-40", "-report", md.to_str().unwrap()]);
        assert!(out.stderr.contains("report written to"), "{}", out.stderr);
        std::fs::read_to_string(&md).unwrap()
    };
    let first = report(false);
    assert!(first.starts_with("# seedfall report: kvrep\n"), "{first}");
    assert!(first.contains("### [new] property \"acknowledged writes survive crashes\""), "{first}");
    assert!(first.contains("seedfall replay -c ") && first.contains("seedfall shrink -c "));
    assert!(first.contains("| acknowledged writes survive crashes | always |"));
    assert!(report(false).contains("### [ongoing] property \"acknowledged writes survive crashes\""));
    let fixed = report(true);
    assert!(fixed.contains("## Failures\n\nNone."), "{fixed}");
    assert!(fixed.contains("## Resolved since the last report\n\n- failure property \"acknowledged writes survive crashes\""), "{fixed}");
    assert!(report(false).contains("### [regressed] property \"acknowledged writes survive crashes\""));
    let tracked: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join(".seedfall/findings.json")).unwrap()).unwrap();
    assert_eq!(tracked["version"], 1);
    assert!(!dir.join("seedfall-findings.json").exists(), "nothing seedfall writes is named like a config");
    assert_eq!(tracked["findings"]["failure property \"acknowledged writes survive crashes\""]["status"], "regressed");
}

#[test]
fn html_report_is_self_contained_with_timeline_and_exploration() {
    let dir = scratch("report-html");
    let cfg = kvlog(&dir, false);
    let html = dir.join("report.html");
    let out = seedfall(&["run", "-c", cfg.to_str().unwrap(), "-seeds", "1-200", "-until-novelty", "3", "-batch", "20", "-report", html.to_str().unwrap()]);
    assert_eq!(out.code, 1);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>"));
    assert!(!page.contains("src=\"http") && !page.contains("href=\"http"), "no outside resources");
    assert!(page.contains("<h2>Failures</h2>") && page.contains("class=\"status new\""));
    assert!(page.contains("<iframe class=\"timeline\""), "the shortest failing run's timeline");
    assert!(page.contains("<h2>Properties</h2>") && page.contains("<h2>Exploration</h2>"));
    assert!(page.contains("runs/s") && page.contains("virtual s per wall s"));
}

#[test]
fn explore_report_has_the_rounds() {
    let dir = scratch("report-explore");
    let cfg = dir.join("seedfall.json");
    std::fs::write(&cfg, format!(r#"{{ "name": "vault", "duration": "2s", "nodes": [ {{ "name": "client", "replicas": 1, "go": {{ "dir": "{}" }} }} ] }}"#, repo().join("examples/explore").display())).unwrap();
    let md = dir.join("r.md");
    seedfall(&["explore", "-c", cfg.to_str().unwrap(), "-explore-seed", "7", "-rounds", "80", "-report", md.to_str().unwrap()]);
    let text = std::fs::read_to_string(&md).unwrap();
    assert!(text.contains("## Exploration\n\n| round | runs |"), "{text}");
    assert!(text.contains("stopped: failure found"));
    assert!(text.contains("the vault opened after 6 consecutive lucky draws"));
}

#[test]
fn cpu_profile_is_a_pprof_file_of_a_real_sweep() {
    let dir = scratch("cpuprofile");
    let prof = dir.join("cpu.pprof");
    let out = seedfall(&["run", "-c", "examples/kvlog/seedfall.fixed.json", "-seeds", "1-150", "-cpuprofile", prof.to_str().unwrap()]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::metadata(&prof).unwrap().len() > 1000);
    let top = std::process::Command::new("go").args(["tool", "pprof", "-top", "-nodecount=400"]).arg(&prof).env("GOTOOLCHAIN", "local").output().unwrap();
    let text = String::from_utf8_lossy(&top.stdout);
    assert!(top.status.success(), "{}", String::from_utf8_lossy(&top.stderr));
    assert!(text.contains("Type: cpu"), "{text}");
    assert!(text.contains("seedfall_sim::"), "host frames are named: {text}");
    assert!(text.contains("wasmtime::"), "{text}");
}
