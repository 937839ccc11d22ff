//! Pinned regressions: failures the user turned into tests.
//!
//! `seedfall pin` writes one JSON file per pinned failure into the
//! regressions folder (`regressions` in the config, default `regressions/`
//! next to it), which the user commits. Every `seedfall run` replays each pin
//! before the sweep and says whether it still fails the same way or is fixed.
//! A pin that cannot be read, or no longer fits the config, is skipped and
//! counted, never fatal.
use crate::target::{run_all, Target};
use seedfall_sim::{check_fits, Branch, Config, Fault, Program, Schedule};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

pub const PIN_VERSION: u32 = 1;
/// Bound on pins read from one folder.
pub const PINS_MAX: usize = 10_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pin {
    pub version: u32,
    pub name: String,
    pub config: String,
    pub seed: u64,
    pub faults: Vec<Fault>,
    #[serde(default)]
    pub branches: Vec<Branch>,
    /// A run of a `-from` sweep: the prefix it shares (`Schedule::prefix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<seedfall_sim::schedule::Prefix>,
    pub expected: Target,
}

impl Pin {
    pub fn schedule(&self) -> Schedule {
        Schedule { seed: self.seed, faults: Some(self.faults.clone()), branches: self.branches.clone(), prefix: self.prefix }
    }
}

pub fn dir(config: &Config) -> PathBuf {
    match &config.regressions {
        Some(d) => d.clone(),
        None => config.dir().join("regressions"),
    }
}

/// Writes a pin; returns its path.
pub fn write(config: &Config, name: &str, schedule: &Schedule, expected: Target) -> Result<PathBuf, String> {
    let pin = Pin {
        version: PIN_VERSION,
        name: name.to_string(),
        config: config.name.clone(),
        seed: schedule.seed,
        faults: schedule.faults.clone().unwrap_or_default(),
        branches: schedule.branches.clone(),
        prefix: schedule.prefix,
        expected,
    };
    let path = dir(config).join(format!("{name}.json"));
    crate::cache::write_atomic(&path, &serde_json::to_vec_pretty(&pin).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PinResult {
    pub name: String,
    pub path: String,
    pub still_failing: bool,
    pub expected: Target,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct PinReport {
    pub results: Vec<PinResult>,
    /// `file: why` for each pin that could not be used.
    pub skipped: Vec<String>,
}

fn read_pin(path: &Path, config: &Config) -> Result<Pin, String> {
    let text = seedfall_sim::files::read_text(path, seedfall_sim::files::JSON_BYTES_MAX, "the pin")?;
    let pin: Pin = serde_json::from_str(&text).map_err(|e| format!("not a pin file: {e}"))?;
    if pin.version != PIN_VERSION {
        return Err(format!("pin version {} is not supported", pin.version));
    }
    check_fits(&pin.faults, &pin.branches, config).map_err(|e| format!("stale: {e}"))?;
    Ok(pin)
}

/// Replays every pin of the config's regressions folder.
pub fn replay_all(program: &Program, jobs: usize) -> PinReport {
    let config = &program.config;
    let mut report = PinReport::default();
    let Ok(entries) = std::fs::read_dir(dir(config)) else { return report };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    paths.truncate(PINS_MAX);
    let mut pins = Vec::new();
    for p in paths {
        match read_pin(&p, config) {
            Ok(pin) => pins.push((p, pin)),
            Err(e) => report.skipped.push(format!("{}: {e}", p.display())),
        }
    }
    let schedules: Vec<Schedule> = pins.iter().map(|(_, p)| p.schedule()).collect();
    let outcomes = run_all(program, &schedules, jobs, &AtomicBool::new(false), || {});
    for ((path, pin), o) in pins.into_iter().zip(outcomes) {
        report.results.push(PinResult { name: pin.name, path: path.display().to_string(), still_failing: pin.expected.matches(&o), expected: pin.expected });
    }
    report
}
