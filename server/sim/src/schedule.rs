//! The schedule: what a run is a function of, besides the program.
//!
//! `seed` names the run. `faults`, when present, are exactly the faults to
//! apply (a replay or a shrunk schedule): nothing is drawn from the config's
//! rates. `branches` re-key named streams from a virtual time on (explore and
//! cause); they chain, so a child of a child branches again.
//!
//! `ScheduleFile` is the versioned on-disk form (`faults.json`), documented in
//! docs/schedule.md. A file is checked against the config when read: a fault
//! naming a node instance the config does not have is an error, never ignored.
use crate::config::Config;
use crate::streams::Stream;
use serde::{Deserialize, Serialize};

pub const SCHEDULE_VERSION: u32 = 1;
/// Bound on faults and branches in one schedule.
pub const FAULTS_MAX: usize = 100_000;
pub const BRANCHES_MAX: usize = 1_000;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    pub seed: u64,
    pub faults: Option<Vec<Fault>>,
    pub branches: Vec<Branch>,
}

impl Schedule {
    pub fn seed(seed: u64) -> Schedule {
        Schedule { seed, faults: None, branches: Vec::new() }
    }
}

/// A fault applied to a run. Later sections add crashes, partitions, disk faults.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// The `call`-th evaluation (from 1) of buggify site `site` on `node` fired.
    Buggify { node: String, site: String, call: u64, at_ns: u64 },
}

impl Fault {
    pub fn node(&self) -> &str {
        match self {
            Fault::Buggify { node, .. } => node,
        }
    }
    pub fn at_ns(&self) -> u64 {
        match self {
            Fault::Buggify { at_ns, .. } => *at_ns,
        }
    }
    /// `buggify server "slow-fsync" (call 3)`
    pub fn describe(&self) -> String {
        match self {
            Fault::Buggify { node, site, call, .. } => format!("buggify {node} \"{site}\" (call {call})"),
        }
    }
}

/// Re-key `streams` at the first scheduler step at or after `at_ns`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Branch {
    pub at_ns: u64,
    pub streams: Vec<String>,
    pub key: u64,
}

impl Branch {
    pub fn parsed_streams(&self) -> Vec<Stream> {
        self.streams.iter().filter_map(|s| Stream::from_name(s)).collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScheduleFile {
    pub version: u32,
    pub config: String,
    pub seed: u64,
    pub faults: Vec<Fault>,
    #[serde(default)]
    pub branches: Vec<Branch>,
}

impl ScheduleFile {
    pub fn new(config: &str, schedule: &Schedule, applied: &[Fault]) -> ScheduleFile {
        ScheduleFile {
            version: SCHEDULE_VERSION,
            config: config.to_string(),
            seed: schedule.seed,
            faults: applied.to_vec(),
            branches: schedule.branches.clone(),
        }
    }

    pub fn schedule(&self) -> Schedule {
        Schedule { seed: self.seed, faults: Some(self.faults.clone()), branches: self.branches.clone() }
    }

    /// Parses and checks a schedule file against `config`.
    pub fn parse(text: &str, config: &Config) -> Result<ScheduleFile, String> {
        let file: ScheduleFile = serde_json::from_str(text).map_err(|e| format!("not a schedule file: {e}"))?;
        if file.version != SCHEDULE_VERSION {
            return Err(format!("schedule version {} is not supported (this seedfall reads {SCHEDULE_VERSION})", file.version));
        }
        if file.faults.len() > FAULTS_MAX || file.branches.len() > BRANCHES_MAX {
            return Err(format!("more than {FAULTS_MAX} faults or {BRANCHES_MAX} branches"));
        }
        let instances: Vec<String> = config.instances().into_iter().map(|(_, n)| n).collect();
        for (i, f) in file.faults.iter().enumerate() {
            if !instances.iter().any(|n| n == f.node()) {
                return Err(format!(
                    "faults[{i}] ({}) names node instance \"{}\", which {} does not have (it has: {})",
                    f.describe(),
                    f.node(),
                    config.path.display(),
                    instances.join(", ")
                ));
            }
        }
        for (i, b) in file.branches.iter().enumerate() {
            if b.streams.is_empty() {
                return Err(format!("branches[{i}] re-keys no stream"));
            }
            for s in &b.streams {
                if Stream::from_name(s).is_none() {
                    let names: Vec<&str> = Stream::ALL.iter().map(|s| s.name()).collect();
                    return Err(format!("branches[{i}] names stream \"{s}\"; streams are {}", names.join(", ")));
                }
            }
        }
        Ok(file)
    }
}
