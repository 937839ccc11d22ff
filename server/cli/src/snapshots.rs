//! `-snapshots on|off`, the snapshot runner a command starts, and what it
//! says about it (docs/snapshots.md).
//!
//! The runner is this same binary (`seedfall snapshot-runner`, hidden),
//! loading the same config with the same probes, and given the limits this
//! process gave its runs: it runs exactly the program the command does.
use crate::resources::Resources;
use clap::Args;
use seedfall_search::snapshots::{Report, Snapshots};
use seedfall_search::Project;
use std::path::{Path, PathBuf};

#[derive(Args, Clone, Debug)]
pub struct SnapshotArgs {
    /// `on`: children continue from snapshots of their parent run instead
    /// of running its prefix again, when runs are long enough to gain (the
    /// default); `always`: even for short runs; `off`: every run from the
    /// start. The output is the same either way, but for wall-clock figures.
    #[arg(long = "snapshots", default_value = "on", value_parser = ["on", "always", "off"])]
    pub snapshots: String,
}

impl SnapshotArgs {
    pub fn on(&self) -> bool {
        self.snapshots != "off"
    }

    /// How long a run must take for explore and cause to use snapshots.
    pub fn worth_ns(&self) -> u64 {
        if self.snapshots == "always" { 0 } else { seedfall_search::snapshots::WORTH_RUN_NS }
    }
}

/// The hidden `seedfall snapshot-runner`: a process that forks.
#[derive(Args)]
pub struct RunnerArgs {
    #[arg(short = 'c', long = "config")]
    pub config: PathBuf,
    #[arg(long = "coverage", default_value = "functions", value_parser = ["functions", "edges"])]
    pub coverage: String,
}

pub fn runner_main(a: RunnerArgs) -> i32 {
    let mode = (a.coverage == "edges").then_some(seedfall_sim::coverage::Mode::Edges);
    match crate::load::project_with(&a.config, true, mode) {
        Ok(project) => seedfall_search::snapshots::runner::serve(project.program),
        Err(code) => code,
    }
}

/// Starts the runner for `project` (loaded from `config` with
/// `resources`), unless `-snapshots off`. When it cannot start, says why
/// on stderr and returns None: every run then starts from the beginning.
pub fn start(args: &SnapshotArgs, config: &Path, resources: &Resources, project: &Project, edges: bool) -> Option<Snapshots> {
    if !args.on() {
        return None;
    }
    let budget = resources.memory_budget().ok()?;
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("seedfall: snapshots are off: this program's own path is unknown ({e}); every run starts from the beginning");
            return None;
        }
    };
    let mut argv = vec!["snapshot-runner".to_string(), "--config".into(), config.display().to_string()];
    if edges {
        argv.extend(["--coverage".into(), "edges".into()]);
    }
    match Snapshots::start(&exe, &argv, &project.program.config.limits, crate::resources::snapshots_part(budget)) {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("seedfall: snapshots are off: {why}; every run starts from the beginning");
            None
        }
    }
}

/// What snapshots did, or that they were never started because the runs
/// were too short to gain from them.
pub fn say_lazy(cell: &std::sync::OnceLock<Option<Snapshots>>, args: &SnapshotArgs) {
    match cell.get() {
        Some(s) => say(s.as_ref()),
        None if args.on() => eprintln!(
            "seedfall: snapshots: not used: these runs take under {} ms each, too short for a snapshot to pay",
            seedfall_search::snapshots::WORTH_RUN_NS / 1_000_000
        ),
        None => {}
    }
}

/// One line on stderr of what snapshots did (stdout stays the same with
/// `-snapshots off`).
pub fn say(snapshots: Option<&Snapshots>) {
    let Some(s) = snapshots else { return };
    eprintln!("seedfall: {}", line(&s.report()));
}

pub fn line(r: &Report) -> String {
    let ms = |ns: u64, n: u64| if n == 0 { 0.0 } else { ns as f64 / n as f64 / 1e6 };
    let mut s = format!(
        "snapshots: {} taken (fork {:.1} ms each), {} run{} continued from one (start {:.1} ms each), at most {} held",
        r.taken,
        ms(r.take_fork_ns, r.taken),
        r.children,
        if r.children == 1 { "" } else { "s" },
        ms(r.child_fork_ns, r.children),
        seedfall_sim::memory::human(r.held_bytes_max),
    );
    if r.scratch_runs() > 0 {
        let why: Vec<String> = r.from_scratch.iter().map(|(why, n)| format!("{n} because {why}")).collect();
        s.push_str(&format!("; {} from the start ({})", r.scratch_runs(), why.join("; ")));
    }
    s
}
