//! `-seed N` and `-faults FILE`: which schedule a command runs.
use seedfall_search::Project;
use seedfall_sim::{Schedule, ScheduleFile};
use std::path::Path;

/// A schedule file, checked against the project's config; prints the error
/// and returns exit code 2.
pub fn read_file(project: &Project, path: &Path) -> Result<ScheduleFile, i32> {
    let text = seedfall_sim::files::read_text(path, seedfall_sim::files::JSON_BYTES_MAX, "the schedule file").map_err(|e| {
        eprintln!("seedfall: -faults: {e}");
        2
    })?;
    ScheduleFile::parse(&text, &project.program.config).map_err(|e| {
        eprintln!("seedfall: {}: {e}", path.display());
        2
    })
}

/// The schedule named by the flags; prints the error and returns exit code 2.
pub fn resolve(project: &Project, seed: Option<u64>, faults: Option<&Path>) -> Result<Schedule, i32> {
    match (seed, faults) {
        (None, None) => {
            eprintln!("seedfall: give -seed N (and optionally -faults FILE)");
            Err(2)
        }
        (Some(seed), None) => Ok(Schedule::seed(seed)),
        (seed, Some(path)) => {
            let file = read_file(project, path)?;
            if let Some(s) = seed {
                if s != file.seed {
                    eprintln!("seedfall: -seed {s} does not match {} (seed {})", path.display(), file.seed);
                    return Err(2);
                }
            }
            Ok(file.schedule())
        }
    }
}

/// The flags that name one run: `-c FILE`, `-seed N`, `-faults FILE`.
#[derive(clap::Args)]
pub struct RunSpec {
    /// The config file.
    #[arg(short = 'c', long = "config", default_value = "seedfall.json")]
    pub config: std::path::PathBuf,
    /// The seed (optional with -faults: the file names it).
    #[arg(long)]
    pub seed: Option<u64>,
    /// A schedule file (a failure folder's faults.json): exactly that run.
    #[arg(long)]
    pub faults: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub resources: crate::resources::Resources,
}

impl RunSpec {
    /// Loads the project and resolves the schedule; on error, prints it and
    /// returns the exit code.
    pub fn load(&self, quiet: bool) -> Result<(Project, Schedule), i32> {
        self.load_for(quiet, 1).map(|(p, s, _)| (p, s))
    }

    /// As `load`, for a tool that runs `jobs` at a time; returns the
    /// workers that fit the memory budget.
    pub fn load_for(&self, quiet: bool, jobs: usize) -> Result<(Project, Schedule, usize), i32> {
        self.load_profiling(quiet, jobs, false)
    }

    /// As `load_for`, on a profiling engine when `guest_profiling`.
    pub fn load_profiling(&self, quiet: bool, jobs: usize, guest_profiling: bool) -> Result<(Project, Schedule, usize), i32> {
        let (project, jobs) = crate::load::project_for_profiling(&self.config, quiet, &self.resources, jobs, guest_profiling)?;
        let schedule = resolve(&project, self.seed, self.faults.as_deref())?;
        Ok((project, schedule, jobs))
    }

    /// Runs the schedule, which must fail (`what` says what the tool needed
    /// the failure for), and names the folder where the tool writes: beside
    /// the `-faults` file, or the run's own failure folder.
    pub fn failing(&self, project: &Project, schedule: &Schedule, what: &str) -> Result<(seedfall_sim::Outcome, std::path::PathBuf), i32> {
        let outcome = seedfall_sim::run(&project.program, schedule, &seedfall_sim::RunOptions::default());
        if outcome.failure.is_none() {
            eprintln!("seedfall: seed {} passes: there is no failure to {what}", schedule.seed);
            return Err(2);
        }
        let dir = match &self.faults {
            Some(f) => f.parent().map(Path::to_path_buf).unwrap_or_default(),
            None => self.resources.write_failure(project, &outcome).map_err(|e| {
                eprintln!("seedfall: {e}");
                2
            })?,
        };
        Ok((outcome, dir))
    }
}
