//! What a sweep found, as facts: the one leaf that `seedfall run` fills from
//! its own runs and `seedfall merge` from shard results, and that every
//! printer (text, JSON, JUnit) reads. Nothing here prints: the CLI renders
//! these facts, which is what makes a merge print what the unsharded run
//! prints. The JSON document (`SweepResult::json`) is a file format, so it
//! is defined here with its version.
use crate::finding::Findings;
use crate::properties::{PropertyTable, PropertyTally};
use crate::SweepSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of run's (and merge's) JSON document. 2: `seedfall` (version
/// and build) and, in a shard's result, `shard`.
pub const RUN_JSON_VERSION: u32 = 2;

/// Where a property is, as the terminal shows it and as last-run records it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Place {
    pub text: String,
    pub source: Option<crate::artifacts::Source>,
}

/// The failure block of a finding's shortest run so far, and its folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Block {
    pub seed: u64,
    pub text: String,
    pub folder: Option<String>,
    /// Where it failed, as the terminal shows it (`examples/kv/main.go:12`).
    #[serde(default)]
    pub place: String,
}

/// One failing run as the `-json` document lists it.
#[derive(Clone, Serialize, Deserialize)]
pub struct FailureJson {
    pub seed: u64,
    pub time_ns: u64,
    pub time: String,
    pub steps: u64,
    pub real_ns: u64,
    pub trace_hash: String,
    pub nodes: Vec<NodeFailureJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
    /// The file-system model it was found under, and whether it holds under the other.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<seedfall_sim::outcome::ModelCheck>,
}

#[derive(Clone, Serialize, Deserialize)]
pub struct NodeFailureJson {
    pub node: String,
    pub kind: seedfall_sim::failure::FailureKind,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    pub location: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// Where the terminal shows a property, from places by message (empty when
/// they do not say).
pub fn place_text(places: &BTreeMap<String, Place>, t: &PropertyTally) -> String {
    places.get(&t.message).map(|p| p.text.clone()).unwrap_or_default()
}

/// A sweep's facts once it is done (or merged).
pub struct SweepResult {
    /// The config, relative to the current folder.
    pub config: String,
    /// The config's name (`$.name`, or from its file name).
    pub name: String,
    pub seeds: String,
    /// `seedfall run: kvlog (3 node instances), seeds 1-200`: the header
    /// line without its workers.
    pub header: String,
    pub jobs: usize,
    pub keep: usize,
    pub pins: crate::pins::PinReport,
    pub catalog_warnings: Vec<String>,
    /// Every failing run's JSON, in seed order.
    pub failures: Vec<FailureJson>,
    pub failed_seeds: Vec<u64>,
    pub found: Findings,
    /// By finding id.
    pub blocks: BTreeMap<String, Block>,
    pub table: PropertyTable,
    /// By property message.
    pub places: BTreeMap<String, Place>,
    pub summary: SweepSummary,
    pub hashes: Option<Vec<(u64, String)>>,
    /// Older folders of these findings removed after the sweep.
    pub pruned: usize,
    /// `.seedfall/failures-index.json` of the config.
    pub index: std::path::PathBuf,
}

/// The `-json` document. `S` is a shard's block (`shard_result::ShardBlock`,
/// which reads this document back); it is a parameter so that these facts
/// do not depend on the shard format built on them.
#[derive(Serialize)]
pub struct RunJson<'a, S: Serialize> {
    pub version: u32,
    /// seedfall's version (its build is in a shard's identity).
    pub seedfall: String,
    pub config: &'a str,
    pub seeds: &'a str,
    pub jobs: usize,
    pub runs: u64,
    pub passed: u64,
    pub failed: u64,
    pub seeds_per_second: f64,
    pub virtual_seconds_per_wall_second: f64,
    pub failures: &'a [FailureJson],
    pub pins: &'a crate::pins::PinReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exploration: Option<serde_json::Value>,
    pub properties: Vec<&'a PropertyTally>,
    pub findings: Vec<crate::properties::Finding>,
    /// Failing runs grouped by what failed (`finding::Signature`).
    pub failure_findings: Vec<&'a crate::finding::Finding>,
    pub catalog_warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_hashes: Option<&'a [(u64, String)]>,
    pub totals: &'a SweepSummary,
    /// In a shard's result only: what `seedfall merge` needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<S>,
}

impl SweepResult {
    /// The `-json` document, with `shard` in a shard's result.
    pub fn json<S: Serialize>(&self, shard: Option<S>) -> RunJson<'_, S> {
        let s = &self.summary;
        RunJson {
            version: RUN_JSON_VERSION,
            seedfall: env!("CARGO_PKG_VERSION").to_string(),
            config: &self.config,
            seeds: &self.seeds,
            jobs: self.jobs,
            runs: s.runs,
            passed: s.runs - s.failures,
            failed: s.failures,
            seeds_per_second: s.seeds_per_second,
            virtual_seconds_per_wall_second: s.virtual_seconds_per_wall_second,
            failures: &self.failures,
            pins: &self.pins,
            exploration: s.stop_reason.as_ref().map(|stop| serde_json::json!({ "growth": s.growth, "stop": stop })),
            properties: self.table.by_message.values().collect(),
            findings: self.table.findings(),
            failure_findings: self.found.ordered(),
            catalog_warnings: &self.catalog_warnings,
            trace_hashes: self.hashes.as_deref(),
            totals: s,
            shard,
        }
    }

    pub fn pins_failing(&self) -> usize {
        self.pins.results.iter().filter(|p| p.still_failing).count()
    }

    /// Where the terminal shows a property (empty when it does not know).
    pub fn place(&self, t: &PropertyTally) -> String {
        place_text(&self.places, t)
    }

    /// 0 every run passed; 1 a run failed, the sweep has a verdict against
    /// a property, or (with -fail-on-pinned) a pin still fails.
    pub fn exit_code(&self, fail_on_pinned: bool) -> i32 {
        let pins_fail = fail_on_pinned && self.pins_failing() > 0;
        i32::from(self.summary.failures > 0 || !self.table.findings().is_empty() || pins_fail)
    }

    /// A failure whose folder a shorter run displaced (or a merge pruned) has none.
    pub fn drop_gone_folders(&mut self) {
        for f in &mut self.failures {
            if f.folder.as_ref().is_some_and(|p| !std::path::Path::new(p).is_dir()) {
                f.folder = None;
            }
        }
    }

    /// Writes `.seedfall/last-run/<config>.json` (the daemon's lenses read it).
    pub fn save_last_run(&self, config: &seedfall_sim::Config) -> Result<(), String> {
        let source = |t: &PropertyTally| self.places.get(&t.message).and_then(|p| p.source.clone());
        crate::properties::save_last_run(config, &self.seeds, self.summary.runs, self.summary.failures, &self.table, &source)
    }
}
