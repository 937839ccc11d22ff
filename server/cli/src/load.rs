//! Loading a config for a command, with build progress on stderr.
use seedfall_search::{LoadError, Project};
use std::path::Path;

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
