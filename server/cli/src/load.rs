//! Loading a config for a command, with build progress on stderr.
use seedfall_search::{LoadError, Project};
use std::path::Path;

/// Loads the project and gives each of `jobs` runs its share of the
/// resources; returns the workers that fit the memory budget.
pub fn project_for(config: &Path, quiet: bool, resources: &crate::resources::Resources, jobs: usize) -> Result<(Project, usize), i32> {
    let mut p = project(config, quiet)?;
    let jobs = resources.apply(&mut p, jobs)?;
    Ok((p, jobs))
}

pub fn project(config: &Path, quiet: bool) -> Result<Project, i32> {
    let mut log = |msg: &str| {
        if !quiet {
            eprintln!("seedfall: {msg}");
        }
    };
    seedfall_search::load(config, &mut log).map_err(|e| {
        match e {
            LoadError::Config(e) => eprintln!("seedfall: config error: {e}"),
            LoadError::Build(e) => eprintln!("seedfall: {e}"),
        }
        2
    })
}
