//! What a sweep says when it is done, as text and as JSON, from one set of
//! facts (`Report`). `seedfall run` fills it from its own runs and `seedfall
//! merge` from shard results; both print it with the same functions, which
//! is what makes a merge print what the unsharded run prints.
use crate::output;
use seedfall_search::finding::Findings;
use seedfall_search::properties::{PropertyTable, PropertyTally};
use seedfall_search::SweepSummary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Version of run's (and merge's) JSON document. 2: `seedfall` (version
/// and build) and, in a shard's result, `shard`.
pub const RUN_JSON_VERSION: u32 = 2;

/// Where a property is, as the terminal shows it and as last-run records it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Place {
    pub text: String,
    pub source: Option<seedfall_search::artifacts::Source>,
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

pub struct Report {
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
    pub pins: seedfall_search::pins::PinReport,
    pub catalog_warnings: Vec<String>,
    /// Every failing run's JSON, in seed order.
    pub failures: Vec<output::FailureJson>,
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
    /// `.seedfall/failures-index.json` of the config, relative.
    pub index: String,
}

#[derive(Serialize)]
pub struct RunJson<'a> {
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
    pub failures: &'a [output::FailureJson],
    pub pins: &'a seedfall_search::pins::PinReport,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exploration: Option<serde_json::Value>,
    pub properties: Vec<&'a PropertyTally>,
    pub findings: Vec<seedfall_search::properties::Finding>,
    /// Failing runs grouped by what failed (`finding::Signature`).
    pub failure_findings: Vec<&'a seedfall_search::finding::Finding>,
    pub catalog_warnings: &'a [String],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_hashes: Option<&'a [(u64, String)]>,
    pub totals: &'a SweepSummary,
    /// In a shard's result only: what `seedfall merge` needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::sharded::ShardBlock>,
}

impl Report {
    pub fn json(&self, shard: Option<crate::sharded::ShardBlock>) -> RunJson<'_> {
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

    /// The pinned-regressions block that opens the output.
    pub fn pins_text(&self) -> String {
        let mut s = String::new();
        if !self.pins.results.is_empty() {
            s.push_str(&format!("pinned regressions ({}):\n", self.pins.results.len()));
            for p in &self.pins.results {
                let state = if p.still_failing { "still failing" } else { "fixed" };
                s.push_str(&format!("  {state:<14} {:<32} {}\n", p.name, p.expected.describe()));
            }
        }
        s
    }

    pub fn header_line(&self) -> String {
        format!("{}, {} worker{}\n", self.header, self.jobs, if self.jobs == 1 { "" } else { "s" })
    }

    pub fn pins_failing(&self) -> usize {
        self.pins.results.iter().filter(|p| p.still_failing).count()
    }

    fn place(&self, t: &PropertyTally) -> String {
        self.places.get(&t.message).map(|p| p.text.clone()).unwrap_or_default()
    }

    /// Everything after the runs: findings, the property table, the sweep's
    /// verdicts, the summary line and pins still failing.
    pub fn results_text(&self, fail_on_pinned: bool) -> String {
        let mut out = String::new();
        for f in self.found.ordered() {
            let block = self.blocks.get(&f.id);
            let text = block.map(|b| b.text.as_str()).unwrap_or_default();
            let folder = block.and_then(|b| b.folder.as_ref()).map(PathBuf::from);
            out.push_str(&output::finding_block(f, text, folder.as_deref(), &self.config, self.keep));
        }
        if !self.found.by_id.is_empty() {
            let n = self.found.by_id.len();
            let removed = if self.pruned > 0 { format!("; {} older folder{} of these findings removed", self.pruned, if self.pruned == 1 { "" } else { "s" }) } else { String::new() };
            out.push_str(&format!(
                "{} failing run{} in {n} finding{}: folders of the {} shortest of each kept, every seed listed in {}{removed}\n\n",
                self.failed_seeds.len(),
                if self.failed_seeds.len() == 1 { "" } else { "s" },
                if n == 1 { "" } else { "s" },
                self.keep,
                self.index
            ));
        }
        let s = &self.summary;
        if !s.growth.is_empty() {
            out.push_str("round  runs  new signals  signals  new functions  functions\n");
            for g in &s.growth {
                out.push_str(&format!("{:>5}  {:>4}  {:>11}  {:>7}  {:>13}  {:>9}\n", g.round, g.runs, g.new_signals, g.signals, g.new_functions, g.functions));
            }
            out.push_str(&format!("stopped: {}\n", s.stop_reason.as_deref().unwrap_or("")));
        }
        out.push_str(&output::property_table(&self.table, &|t| self.place(t)));
        for f in &self.table.findings() {
            out.push_str(&output::finding_line(f, &|t| self.place(t)));
            out.push('\n');
        }
        out.push_str(&output::summary_line(s, &self.failed_seeds));
        out.push('\n');
        let failing = self.pins_failing();
        if failing > 0 {
            let note = if fail_on_pinned { "" } else { " (pass -fail-on-pinned to fail on them)" };
            out.push_str(&format!("{failing} pinned regression{} still failing{note}\n", if failing == 1 { "" } else { "s" }));
        }
        out
    }

    /// 0 every run passed; 1 a run failed, the sweep has a verdict against
    /// a property, or (with -fail-on-pinned) a pin still fails.
    pub fn exit_code(&self, fail_on_pinned: bool) -> i32 {
        let pins_fail = fail_on_pinned && self.pins_failing() > 0;
        i32::from(self.summary.failures > 0 || !self.table.findings().is_empty() || pins_fail)
    }
}

impl Report {
    /// Writes `-json` (to stdout, or FILE) with `shard` in it, and `-junit
    /// FILE`; says what it could not write. Returns whether all were written.
    pub fn write_outputs(&self, json: Option<&str>, shard: Option<crate::sharded::ShardBlock>, junit: Option<&std::path::Path>, fail_on_pinned: bool) -> bool {
        let mut ok = true;
        if let Some(dest) = json {
            if let Err(e) = emit_json(dest, &self.json(shard)) {
                eprintln!("seedfall: {e}");
                ok = false;
            }
        }
        if let Some(path) = junit {
            if let Err(e) = crate::junit::write_sweep(path, self, fail_on_pinned) {
                eprintln!("seedfall: {e}");
                ok = false;
            }
        }
        ok
    }
}

/// A failure whose folder a shorter run displaced (or a merge pruned) has none.
pub fn drop_gone_folders(report: &mut Report) {
    for f in &mut report.failures {
        if f.folder.as_ref().is_some_and(|p| !std::path::Path::new(p).is_dir()) {
            f.folder = None;
        }
    }
}

/// Writes `.seedfall/last-run/<config>.json` (the daemon's lenses read it).
pub fn save_last_run(config: &seedfall_sim::Config, report: &Report) {
    let source = |t: &PropertyTally| report.places.get(&t.message).and_then(|p| p.source.clone());
    if let Err(e) = seedfall_search::properties::save_last_run(config, &report.seeds, report.summary.runs, report.summary.failures, &report.table, &source) {
        eprintln!("seedfall: {e}");
    }
}

/// Writes a JSON document to stdout (`dest` empty) or atomically to a file.
pub fn emit_json(dest: &str, doc: &impl Serialize) -> Result<(), String> {
    use std::io::Write;
    // Written as it is serialized: a merged sweep's document is as large as
    // its shards, and holding its text too would double the merge's memory.
    let mut write = |w: &mut dyn Write| -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        serde_json::to_writer_pretty(&mut w, doc)?;
        w.write_all(b"\n")?;
        w.flush()
    };
    if dest.is_empty() {
        return write(&mut std::io::stdout().lock())
            .map_err(|e| format!("-json: cannot write to standard output: {e}"));
    }
    seedfall_search::cache::write_atomic_with(std::path::Path::new(dest), &mut write)
        .map_err(|e| format!("-json {dest}: cannot write it: {e}"))
}
