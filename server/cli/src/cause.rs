//! `seedfall cause`: the faults the failure needs, when it became certain
//! after them, and what happened then.
use crate::output;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::cause::faults::{FaultTest, Rerun};
use seedfall_search::cause::{Became, CauseOptions, CauseReport, Failing, MomentsAfter, CERTAIN, LIKELY};
use seedfall_search::target::{exact, Target};
use seedfall_sim::{Schedule, ScheduleFile, VTime};
use serde_json::{json, Value};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct CauseArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Moments to branch at, evenly spread from the last necessary fault to the failure.
    #[arg(long, default_value_t = 16)]
    pub moments: usize,
    /// Children per moment.
    #[arg(long, default_value_t = 8)]
    pub children: usize,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub snapshots: crate::snapshots::SnapshotArgs,
}

fn bar_of(failing: u32, children: u32) -> String {
    const WIDTH: u32 = 20;
    let full = (failing * WIDTH).div_ceil(children.max(1));
    format!("{}{}", "#".repeat(full as usize), ".".repeat((WIDTH - full) as usize))
}

/// Writes the schedules cause ran (children, and the fault tests: without
/// each fault, moved, without any) and returns their listings for `-json`,
/// in the order of the report.
struct Written {
    children: Vec<Value>,
    /// (index in the schedule's faults) -> (without file, moved files).
    tests: std::collections::BTreeMap<usize, (String, Vec<String>)>,
    without_any: Option<String>,
}

fn write_schedules(config_name: &str, dir: &Path, report: &CauseReport) -> Result<Written, String> {
    let write = |name: String, s: &Schedule| -> Result<String, String> {
        let file = ScheduleFile::new(config_name, s, s.faults.as_deref().unwrap_or(&[]));
        let path = dir.join(name);
        seedfall_search::cache::write_atomic(&path, &serde_json::to_vec_pretty(&file).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        Ok(output::relative(&path))
    };
    let mut children = Vec::with_capacity(report.children.len());
    for ((i, k, s), fails) in report.children.iter().zip(&report.child_fails) {
        children.push(json!({ "file": write(format!("child-{i:03}-{k:03}.json"), s)?, "fails": fails }));
    }
    let mut tests = std::collections::BTreeMap::new();
    for t in report.necessary_faults.iter().chain(&report.incidental_faults) {
        let without = write(format!("without-{:03}.json", t.index), &t.schedule_without)?;
        let moved = t.moved.iter().enumerate().map(|(k, m)| write(format!("moved-{:03}-{k}.json", t.index), &m.schedule)).collect::<Result<Vec<_>, _>>()?;
        tests.insert(t.index, (without, moved));
    }
    let without_any = match &report.schedule_without_any {
        Some(s) => Some(write("without-any.json".into(), s)?),
        None => None,
    };
    Ok(Written { children, tests, without_any })
}

fn json_of(report: &CauseReport, written: Written, children_dir: &Path) -> Value {
    let mut v = serde_json::to_value(report).unwrap();
    for list in ["necessary_faults", "incidental_faults"] {
        for t in v[list].as_array_mut().unwrap() {
            let (without, moved) = &written.tests[&(t["index"].as_u64().unwrap() as usize)];
            t["file"] = json!(without);
            for (m, file) in t["moved"].as_array_mut().unwrap().iter_mut().zip(moved) {
                m["file"] = json!(file);
            }
        }
    }
    v["without_any_fault_file"] = json!(written.without_any);
    v["children_dir"] = json!(output::relative(children_dir));
    v["children"] = Value::Array(written.children);
    v
}

/// `without it: passes; moved: disk op #177 passes, ...`
fn test_line(t: &FaultTest) -> String {
    let without = match (t.without, &t.without_failure) {
        (Rerun::Fails, _) => "still fails".to_string(),
        (Rerun::FailsOtherwise, Some(other)) => format!("fails otherwise ({})", output::safe(other)),
        (r, _) => r.text().to_string(),
    };
    if t.moved.is_empty() {
        return format!("without it: {without}");
    }
    let moved: Vec<String> = t.moved.iter().map(|m| format!("{} {}", m.to, m.rerun.text())).collect();
    format!("without it: {without}; moved: {}", moved.join(", "))
}

fn print_faults(report: &CauseReport) {
    let tested: Vec<&FaultTest> = {
        let mut all: Vec<&FaultTest> = report.necessary_faults.iter().chain(&report.incidental_faults).collect();
        all.sort_by_key(|t| t.index);
        all
    };
    if tested.is_empty() {
        println!("faults: none before the failure; it does not depend on faults");
        return;
    }
    println!(
        "faults before the failure: {}, each tried without it, the necessary ones moved earlier and later ({} runs):",
        tested.len() + report.faults_untested,
        report.fault_runs
    );
    let width = tested.iter().map(|t| VTime(t.fault.at_ns()).to_string().len()).max().unwrap_or(0);
    for t in &tested {
        let what = if t.necessary { "necessary " } else { "incidental" };
        println!("  {what}  {:>width$}  {}", VTime(t.fault.at_ns()).to_string(), t.fault.describe());
        println!("  {:10}  {:>width$}  {}", "", "", test_line(t));
    }
    if report.faults_untested > 0 {
        println!("  ({} earlier faults not tested: cause tests the {} nearest the failure)", report.faults_untested, seedfall_search::cause::faults::FAULTS_TESTED_MAX);
    }
    match (report.necessary_faults.is_empty(), report.depends_on_faults) {
        (_, false) => println!("the failure does not depend on faults: it fails without any of them"),
        (true, true) => println!("no single fault is necessary, but without any of them it passes: more than one can cause it"),
        (false, true) => {}
    }
}

fn print_moments(report: &CauseReport, moments: usize, children: usize) {
    let runs = moments * children;
    let after = match report.moments_after {
        MomentsAfter::Start => String::new(),
        MomentsAfter::LastNecessaryFault => format!(" after the last necessary fault (t={})", VTime(report.moments_after_ns)),
        MomentsAfter::LastBranch => format!(" after the schedule's last branch (t={})", VTime(report.moments_after_ns)),
    };
    println!("branched{after} at {moments} moments x {children} children ({runs} runs); fraction that still fail:");
    let width = report.moments.iter().map(|m| VTime(m.at_ns).to_string().len()).max().unwrap_or(0);
    for m in &report.moments {
        println!("  t={:>width$}  {}  {}/{}", VTime(m.at_ns).to_string(), bar_of(m.failing, m.children), m.failing, m.children);
    }
}

fn print_window(report: &CauseReport, nodes_width: usize) {
    let (certain, likely) = ((CERTAIN * 100.0).round(), (LIKELY * 100.0).round());
    match (report.became, report.window) {
        (Became::Certain, Some((0, 0))) => println!("the failure was certain from the start: every branch fails"),
        (Became::Certain, Some((after, until))) => {
            let right_after = match report.moments_after {
                _ if after != report.moments_after_ns => "",
                MomentsAfter::LastNecessaryFault => ", right after the last necessary fault",
                MomentsAfter::LastBranch => ", right after the schedule's last branch",
                MomentsAfter::Start => "",
            };
            println!("became certain between t={} and t={}{right_after} (at least {certain}% of the children fail from then on):", VTime(after), VTime(until))
        }
        (Became::Likely, Some((after, until))) => {
            println!("became likely between t={} and t={} (at least {likely}% of the children fail from then on), never certain ({certain}%):", VTime(after), VTime(until))
        }
        (Became::NotForGood, _) => println!("no moment made the failure likely for good: some moments have at least {likely}% of the children failing, but later ones fall below again; no window"),
        _ => println!("no moment made the failure likely: at no moment did {likely}% of the children fail; no window"),
    }
    for e in &report.window_events {
        let node = e.node.as_deref().unwrap_or("");
        println!("  {:>16}  {node:<nodes_width$}  {}", VTime(e.time_ns).to_string(), output::event_text(&e.kind));
    }
}

pub fn main(a: CauseArgs) -> i32 {
    if !(1..=seedfall_search::cause::MOMENTS_MAX).contains(&a.moments) || !(1..=seedfall_search::cause::CHILDREN_MAX).contains(&a.children) {
        eprintln!("seedfall: -moments and -children: expected 1 to 1000");
        return 2;
    }
    let jobs = match crate::run::jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    let (project, schedule, jobs) = match a.run.load_for(a.json, jobs) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let config = &project.program.config;
    let (first, dir) = match a.run.failing(&project, &schedule, "explain") {
        Ok(x) => x,
        Err(code) => return code,
    };
    let failure = first.failure.as_ref().expect("a failing run");
    let target = Target::of(failure);
    let parent = exact(&first);
    let options = CauseOptions { moments: a.moments, children: a.children, jobs };
    let total = seedfall_search::cause::runs_max(parent.faults.as_ref().map_or(0, Vec::len), &options);
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos} runs (at most {len})").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let failing = Failing { schedule: &parent, trace: &first.trace, target: &target, failure_ns: failure.time_ns };
    let started = std::sync::OnceLock::new();
    if first.stats.real_ns >= a.snapshots.worth_ns() {
        started.get_or_init(|| crate::snapshots::start(&a.snapshots, &a.run.config, &a.run.resources, &project, a.run.resources.edges()));
    }
    let snapshots = started.get().and_then(Option::as_ref);
    let report = seedfall_search::cause::cause(&project.program, &failing, &options, snapshots, &stop, &mut || bar.inc(1));
    bar.finish_and_clear();
    crate::snapshots::say_lazy(&started, &a.snapshots);
    drop(started);
    // Every schedule cause ran replays exactly.
    let children_dir: PathBuf = dir.join(format!("cause-seed-{}", schedule.seed));
    let _ = std::fs::remove_dir_all(&children_dir);
    let written = match write_schedules(&config.name, &children_dir, &report) {
        Ok(w) => w,
        Err(e) => {
            eprintln!("seedfall: {e}");
            return 2;
        }
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json_of(&report, written, &children_dir)).unwrap());
        return 0;
    }
    println!("cause of seed {}: {} at t={}", schedule.seed, output::safe(&target.describe()), VTime(failure.time_ns));
    print_faults(&report);
    print_moments(&report, a.moments, a.children);
    let nodes_width = config.instances().iter().map(|(_, n)| n.len()).max().unwrap_or(4);
    print_window(&report, nodes_width);
    println!(
        "child schedules: {} (replay one with seedfall replay -c {} -faults <file>; without-<n>.json and moved-<n>-<k>.json are the fault tests)",
        output::relative(&children_dir),
        output::relative(&config.path)
    );
    0
}
