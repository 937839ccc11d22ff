//! `-seed N` and `-faults FILE`: which schedule a command runs.
use seedfall_search::Project;
use seedfall_sim::{Schedule, ScheduleFile};
use std::path::Path;

/// The schedule named by the flags; prints the error and returns exit code 2.
pub fn resolve(project: &Project, seed: Option<u64>, faults: Option<&Path>) -> Result<Schedule, i32> {
    match (seed, faults) {
        (None, None) => {
            eprintln!("seedfall: give -seed N (and optionally -faults FILE)");
            Err(2)
        }
        (Some(seed), None) => Ok(Schedule::seed(seed)),
        (seed, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                eprintln!("seedfall: cannot read {}: {e}", path.display());
                2
            })?;
            let file = ScheduleFile::parse(&text, &project.program.config).map_err(|e| {
                eprintln!("seedfall: {}: {e}", path.display());
                2
            })?;
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
