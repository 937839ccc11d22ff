//! `seedfall shrink`: a failing schedule reduced to the faults that matter.
use crate::output;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::target::{exact, Target};
use seedfall_sim::{ScheduleFile, VTime};
use std::io::IsTerminal;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct ShrinkArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
}

/// `  427.268ms  crash server during disk op #56, restart at 791.388ms`, aligned.
pub fn fault_lines(faults: &[seedfall_sim::Fault]) -> String {
    let times: Vec<String> = faults.iter().map(|f| VTime(f.at_ns()).to_string()).collect();
    let width = times.iter().map(String::len).max().unwrap_or(0);
    faults.iter().zip(&times).map(|(f, t)| format!("  {t:>width$}  {}\n", f.describe())).collect()
}

pub fn main(a: ShrinkArgs) -> i32 {
    let jobs = match crate::run::jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    let (project, schedule, jobs) = match a.run.load_for(false, jobs) {
        Ok(x) => x,
        Err(code) => return code,
    };
    let config = &project.program.config;
    let (first, dir) = match a.run.failing(&project, &schedule, "shrink") {
        Ok(x) => x,
        Err(code) => return code,
    };
    let target = Target::of(first.failure.as_ref().expect("a failing run"));
    let original = exact(&first);
    let n_before = original.faults.as_ref().map_or(0, Vec::len);
    println!("shrinking seed {}: {} ({n_before} faults)", schedule.seed, crate::output::safe(&target.describe()));
    let bar = if std::io::stderr().is_terminal() {
        let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{spinner} shrinking: {pos} runs").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let result = seedfall_search::shrink::shrink(&project.program, &original, &target, jobs, &stop, &mut |n| bar.set_position(n));
    bar.finish_and_clear();
    let faults = result.shrunk.faults.clone().unwrap_or_default();
    let before: Vec<_> = faults.iter().filter(|f| f.at_ns() <= result.failure_ns).cloned().collect();
    println!("faults before the failure ({}):", before.len());
    print!("{}", fault_lines(&before));
    println!("shrunk {n_before} faults to {} in {} runs; the failure is at t={}", faults.len(), result.runs, VTime(result.failure_ns));
    // The same finding; its message may carry other numbers.
    let was = &first.failure.as_ref().expect("a failing run").message;
    if *was != result.message {
        println!("the same finding, now: {}", crate::output::safe(&result.message));
        println!("             it was: {}", crate::output::safe(was));
    }
    let file = ScheduleFile::new(&config.name, &result.shrunk, &faults);
    let path = dir.join("faults.shrunk.json");
    if let Err(e) = seedfall_search::cache::write_atomic(&path, &serde_json::to_vec_pretty(&file).unwrap()) {
        eprintln!("seedfall: cannot write {}: {e}", path.display());
        return 2;
    }
    println!("wrote {}", output::relative(&path));
    println!("replay it: seedfall replay -c {} -faults {}", output::relative(&config.path), output::relative(&path));
    0
}
