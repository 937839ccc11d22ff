//! `seedfall mutate`: rerun a sweep with durability guarantees weakened one
//! at a time, and say which ones the workload's checks would notice.
use crate::{load, output};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct MutateArgs {
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: PathBuf,
    #[arg(long, default_value = "1-100")]
    pub seeds: String,
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub resources: crate::resources::Resources,
}

pub fn main(a: MutateArgs) -> i32 {
    let seeds = match crate::run::seeds_or_exit(&a.seeds) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let jobs = match crate::run::jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    let (project, jobs) = match load::project_for(&a.config, a.json, &a.resources, jobs) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let total = seeds.len() * (1 + seedfall_search::mutate::applicable(&project.program).len() as u64);
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} runs  {msg}").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let report = seedfall_search::mutate::mutate(&project.program, seeds, jobs, &stop, &mut |phase| bar.set_message(phase.to_string()), &mut || bar.inc(1));
    bar.finish_and_clear();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report).unwrap());
        return 0;
    }
    println!("seedfall mutate: {}, seeds {seeds}", output::relative(&project.program.config.path));
    println!("baseline: {} of {} seeds failed", report.baseline_failed_seeds.len(), seeds.len());
    for m in &report.mutations {
        let verdict = if m.killed {
            format!("killed ({} seeds that passed now fail, first {})", m.new_failures.len(), m.new_failures[0])
        } else {
            "survived: your checks would not notice this class of bug".to_string()
        };
        println!("  {:<36} {verdict}", m.description);
    }
    0
}
