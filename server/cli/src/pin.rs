//! `seedfall pin`: a failure becomes a regression every later `run` replays.
use crate::output;
use clap::Args;
use seedfall_search::target::{exact, Target};
use seedfall_sim::{run, RunOptions};

#[derive(Args)]
pub struct PinArgs {
    #[command(flatten)]
    pub run: crate::schedule::RunSpec,
    /// The pin's name (default: seed-<n>-<signature>).
    #[arg(long)]
    pub name: Option<String>,
}

pub fn main(a: PinArgs) -> i32 {
    let (project, schedule) = match a.run.load(false) {
        Ok(x) => x,
        Err(code) => return code,
    };
    if let Some(n) = &a.name {
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            eprintln!("seedfall: -name: expected letters, digits, '-' or '_', found \"{n}\"");
            return 2;
        }
    }
    let outcome = run(&project.program, &schedule, &RunOptions::default());
    let Some(failure) = &outcome.failure else {
        eprintln!("seedfall: seed {} passes: only a failure can be pinned", schedule.seed);
        return 2;
    };
    let target = Target::of(failure);
    let name = a.name.clone().unwrap_or_else(|| format!("seed-{}-{}", outcome.seed, seedfall_search::artifacts::signature(&outcome)));
    match seedfall_search::pins::write(&project.program.config, &name, &exact(&outcome), target.clone()) {
        Ok(path) => {
            println!("pinned {} as {}", target.describe(), output::relative(&path));
            println!("every `seedfall run -c {}` now replays it first; commit the file", output::relative(&project.program.config.path));
            0
        }
        Err(e) => {
            eprintln!("seedfall: {e}");
            2
        }
    }
}
