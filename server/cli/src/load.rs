//! Loading a config for a command, with build progress on stderr.
use seedfall_search::{LoadError, Project};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

/// Loads the project and gives each of `jobs` runs its share of the
/// resources; returns the workers that fit the memory budget.
pub fn project_for(config: &Path, quiet: bool, resources: &crate::resources::Resources, jobs: usize) -> Result<(Project, usize), i32> {
    project_for_mode(config, quiet, resources, jobs, resources.coverage_mode())
}

pub fn project_for_mode(config: &Path, quiet: bool, resources: &crate::resources::Resources, jobs: usize, mode: Option<seedfall_sim::coverage::Mode>) -> Result<(Project, usize), i32> {
    let mut p = project_with(config, quiet, mode)?;
    let jobs = resources.apply(&mut p, jobs)?;
    Ok((p, jobs))
}

/// `project_for`, on a profiling engine when `guest_profiling`
/// (`-profile FILE`): modules compiled with epoch checks, cached apart.
pub fn project_for_profiling(config: &Path, quiet: bool, resources: &crate::resources::Resources, jobs: usize, guest_profiling: bool) -> Result<(Project, usize), i32> {
    if !guest_profiling {
        return project_for(config, quiet, resources, jobs);
    }
    let options = seedfall_search::LoadOptions { coverage: resources.coverage_mode().or_else(seedfall_search::project::default_coverage), guest_profiling };
    let mut p = load_reporting(quiet, |log| seedfall_search::load_options(config, options, log))?;
    let jobs = resources.apply(&mut p, jobs)?;
    Ok((p, jobs))
}

/// `project`, with coverage probes of `mode` instead of the default.
pub fn project_with(config: &Path, quiet: bool, mode: Option<seedfall_sim::coverage::Mode>) -> Result<Project, i32> {
    load_reporting(quiet, |log| match mode {
        None => seedfall_search::load(config, log),
        Some(m) => seedfall_search::load_with(config, Some(m), log),
    })
}

/// Runs `load` with build progress on stderr; prints its error.
fn load_reporting(quiet: bool, load: impl FnOnce(&mut dyn FnMut(&str)) -> Result<Project, LoadError>) -> Result<Project, i32> {
    let mut progress = Progress::new(!quiet && std::io::stderr().is_terminal());
    let mut log = |msg: &str| {
        if !quiet {
            progress.say(msg);
        }
    };
    let loaded = load(&mut log);
    progress.done();
    loaded.map_err(|e| {
        match e {
            LoadError::Config(e) => eprintln!("seedfall: config error: {e}"),
            LoadError::Build(e) => eprintln!("seedfall: {e}"),
        }
        2
    })
}

/// Build and compile steps: a big module (an embedded nats-server is 33 MB)
/// takes a minute or more to compile the first time, and neither `go build`
/// nor wasmtime reports how far it is. On a terminal the line of a long
/// step ticks with its elapsed time and ends with what it took; elsewhere
/// (CI logs, pipes) a long step is a line when it starts and a line with
/// what it took when it ends, and other steps one plain line.
struct Progress {
    terminal: bool,
    step: Option<(Option<ProgressBar>, String, Instant)>,
}

impl Progress {
    fn new(terminal: bool) -> Progress {
        Progress { terminal, step: None }
    }

    fn say(&mut self, msg: &str) {
        self.done();
        let long = msg.starts_with("building ") || msg.starts_with("compiling ");
        if !long {
            eprintln!("seedfall: {msg}");
            return;
        }
        if !self.terminal {
            eprintln!("seedfall: {msg} ...");
            self.step = Some((None, msg.to_string(), Instant::now()));
            return;
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(ProgressStyle::with_template("seedfall: {msg} {spinner} {elapsed}").unwrap());
        bar.set_message(msg.to_string());
        bar.enable_steady_tick(Duration::from_millis(200));
        self.step = Some((Some(bar), msg.to_string(), Instant::now()));
    }

    fn done(&mut self) {
        if let Some((bar, msg, start)) = self.step.take() {
            if let Some(bar) = bar {
                bar.finish_and_clear();
            }
            eprintln!("seedfall: {msg}: {:.1}s", start.elapsed().as_secs_f64());
        }
    }
}
