//! `seedfall cause`: when the failure became inevitable, and what happened then.
use crate::output;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::target::{exact, Target};
use seedfall_sim::{ScheduleFile, VTime};
use std::io::IsTerminal;

use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct CauseArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// Moments to branch at, evenly spread over the run up to the failure.
    #[arg(long, default_value_t = 16)]
    pub moments: usize,
    /// Children per moment.
    #[arg(long, default_value_t = 8)]
    pub children: usize,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
}

fn bar_of(failing: u32, children: u32) -> String {
    const WIDTH: u32 = 20;
    let full = (failing * WIDTH).div_ceil(children.max(1));
    format!("{}{}", "#".repeat(full as usize), ".".repeat((WIDTH - full) as usize))
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
    let total = (a.moments * a.children) as u64;
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} branched runs").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let target = Target::of(failure);
    let parent = exact(&first);
    let stop = AtomicBool::new(false);
    let report = seedfall_search::cause::cause(&project.program, &parent, &first.trace, &target, failure.time_ns, a.moments, a.children, jobs, &stop, &mut || bar.inc(1));
    bar.finish_and_clear();
    // Every child is a schedule that replays exactly.
    let children_dir = dir.join(format!("cause-seed-{}", schedule.seed));
    let _ = std::fs::remove_dir_all(&children_dir);
    let mut listing = Vec::new();
    for ((i, k, s), fails) in report.children.iter().zip(&report.child_fails) {
        let file = ScheduleFile::new(&config.name, s, s.faults.as_deref().unwrap_or(&[]));
        let path = children_dir.join(format!("child-{i:03}-{k:03}.json"));
        listing.push(serde_json::json!({ "file": output::relative(&path), "fails": fails }));
        if let Err(e) = seedfall_search::cache::write_atomic(&path, &serde_json::to_vec_pretty(&file).unwrap()) {
            eprintln!("seedfall: cannot write {}: {e}", path.display());
            return 2;
        }
    }
    if a.json {
        let mut v = serde_json::to_value(&report).unwrap();
        v["children_dir"] = serde_json::json!(output::relative(&children_dir));
        v["children"] = serde_json::Value::Array(listing);
        println!("{}", serde_json::to_string_pretty(&v).unwrap());
        return 0;
    }
    println!("cause of seed {}: {} at t={}", schedule.seed, crate::output::safe(&target.describe()), VTime(failure.time_ns));
    println!("branched at {} moments x {} children ({} runs); fraction that still fail:", a.moments, a.children, total);
    let width = report.moments.iter().map(|m| VTime(m.at_ns).to_string().len()).max().unwrap_or(0);
    for m in &report.moments {
        println!("  t={:>width$}  {}  {}/{}", VTime(m.at_ns).to_string(), bar_of(m.failing, m.children), m.failing, m.children);
    }
    match report.window {
        Some((0, 0)) => println!("the failure was inevitable from the start: every branch fails"),
        Some((after, until)) => {
            println!("became inevitable between t={} and t={}:", VTime(after), VTime(until));
            let nodes = config.instances().iter().map(|(_, n)| n.len()).max().unwrap_or(4);
            for e in &report.window_events {
                let node = e.node.as_deref().unwrap_or("");
                println!("  {:>16}  {node:<nodes$}  {}", VTime(e.time_ns).to_string(), output::event_text(&e.kind));
            }
        }
        None => println!("no window found"),
    }
    println!("child schedules: {} (replay one with seedfall replay -c {} -faults <file>)", output::relative(&children_dir), output::relative(&config.path));
    0
}
