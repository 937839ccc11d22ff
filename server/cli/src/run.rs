//! `seedfall run`: sweep a seed range.
use crate::{load, output};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use seedfall_search::{SeedRange, SweepOptions};
use seedfall_sim::Verdict;
use serde::Serialize;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

#[derive(Args)]
pub struct RunArgs {
    /// The config file.
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: PathBuf,
    /// Seeds to run: `1-200` or `17`.
    #[arg(long, default_value = "1-100")]
    pub seeds: String,
    /// Worker threads (default: the number of cores).
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Measure time spent in host calls (adds a little overhead).
    #[arg(long)]
    pub profile: bool,
    /// With -json: include every seed's trace hash (for determinism checks).
    #[arg(long)]
    pub hashes: bool,
}

#[derive(Serialize)]
struct RunJson<'a> {
    version: u32,
    config: String,
    seeds: String,
    jobs: usize,
    runs: u64,
    passed: u64,
    failed: u64,
    seeds_per_second: f64,
    virtual_seconds_per_wall_second: f64,
    failures: Vec<output::FailureJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace_hashes: Option<Vec<(u64, String)>>,
    totals: &'a seedfall_search::SweepSummary,
}

pub fn jobs_or_default(jobs: Option<usize>) -> Result<usize, i32> {
    let n = jobs.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    if n == 0 || n > seedfall_search::pool::JOBS_MAX {
        eprintln!("seedfall: -j: expected 1 to {}, found {n}", seedfall_search::pool::JOBS_MAX);
        return Err(2);
    }
    Ok(n)
}

pub fn main(a: RunArgs) -> i32 {
    let seeds = match SeedRange::parse(&a.seeds) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("seedfall: -seeds: {e}");
            return 2;
        }
    };
    let jobs = match jobs_or_default(a.jobs) {
        Ok(j) => j,
        Err(c) => return c,
    };
    let project = match load::project(&a.config, a.json) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let config = &project.program.config;
    if !a.json {
        let n = config.instances().len();
        println!("seedfall run: {} ({n} node instance{}), seeds {seeds}, {jobs} worker{}", config.name, if n == 1 { "" } else { "s" }, if jobs == 1 { "" } else { "s" });
    }
    let bar = if std::io::stderr().is_terminal() && !a.json {
        let b = ProgressBar::with_draw_target(Some(seeds.len()), ProgressDrawTarget::stderr());
        b.set_style(ProgressStyle::with_template("{bar:30} {pos}/{len} seeds  {per_sec}  eta {eta}  {msg}").unwrap());
        b
    } else {
        ProgressBar::hidden()
    };
    let stop = AtomicBool::new(false);
    let mut failures = Vec::new();
    let mut failed_seeds = Vec::new();
    let mut hashes = Vec::new();
    let options = SweepOptions { seeds, jobs, profile: a.profile };
    let summary = seedfall_search::sweep(&project.program, &options, &stop, |outcome| {
        bar.inc(1);
        if a.hashes {
            hashes.push((outcome.seed, format!("{:016x}", outcome.trace_hash)));
        }
        if outcome.verdict == Verdict::Fail {
            failed_seeds.push(outcome.seed);
            bar.set_message(format!("{} failed", failed_seeds.len()));
            if a.json {
                failures.push(output::failure_json(&project, outcome));
            } else {
                bar.suspend(|| print!("{}", output::failure_block(&project, outcome)));
            }
        }
    });
    bar.finish_and_clear();
    if a.json {
        let doc = RunJson {
            version: 1,
            config: output::relative(&config.path),
            seeds: seeds.to_string(),
            jobs,
            runs: summary.runs,
            passed: summary.runs - summary.failures,
            failed: summary.failures,
            seeds_per_second: summary.seeds_per_second,
            virtual_seconds_per_wall_second: summary.virtual_seconds_per_wall_second,
            failures,
            trace_hashes: a.hashes.then_some(hashes),
            totals: &summary,
        };
        println!("{}", serde_json::to_string_pretty(&doc).unwrap());
    } else {
        if !failed_seeds.is_empty() {
            println!();
        }
        println!("{}", output::summary_line(&summary, &failed_seeds));
        if let Some(first) = failed_seeds.first() {
            println!("replay the first failure: seedfall replay -c {} -seed {first}", output::relative(&config.path));
        }
    }
    if summary.failures > 0 { 1 } else { 0 }
}
