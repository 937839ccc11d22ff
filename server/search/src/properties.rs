//! Sweep-level property verdicts: properties aggregated over every run of a
//! sweep, checked against the catalog.
//!
//! A must-hit property (always, sometimes, reachable) that no run reached
//! fails the sweep (`never reached`); a sometimes that was never true fails it
//! (`never true`). Both name the property's source location.
use seedfall_sim::props::{CatalogEntry, PropertyKind};
use seedfall_sim::Outcome;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PropertyTally {
    pub message: String,
    pub kind: PropertyKind,
    pub location: Option<String>,
    /// Runs in which it was evaluated at least once.
    pub runs_hit: u64,
    /// Runs in which it was true at least once.
    pub runs_true: u64,
    /// Runs in which it was false at least once.
    pub runs_false: u64,
    pub in_catalog: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum Finding {
    NeverReached { message: String, kind: PropertyKind, location: Option<String> },
    NeverTrue { message: String, kind: PropertyKind, location: Option<String> },
}

#[derive(Clone, Debug, Default)]
pub struct PropertyTable {
    pub by_message: BTreeMap<String, PropertyTally>,
}

impl PropertyTable {
    pub fn with_catalog(catalog: &[CatalogEntry]) -> PropertyTable {
        let mut t = PropertyTable::default();
        for e in catalog {
            t.by_message.entry(e.message.clone()).or_insert_with(|| PropertyTally {
                message: e.message.clone(),
                kind: e.kind,
                location: Some(e.location.clone()),
                runs_hit: 0,
                runs_true: 0,
                runs_false: 0,
                in_catalog: true,
            });
        }
        t
    }

    pub fn add(&mut self, outcome: &Outcome) {
        for (message, p) in &outcome.properties {
            let t = self.by_message.entry(message.clone()).or_insert_with(|| PropertyTally {
                message: message.clone(),
                kind: p.kind,
                location: p.location.clone(),
                runs_hit: 0,
                runs_true: 0,
                runs_false: 0,
                in_catalog: false,
            });
            t.runs_hit += u64::from(p.hits > 0);
            t.runs_true += u64::from(p.trues > 0);
            t.runs_false += u64::from(p.hits > p.trues);
        }
    }

    /// Adds another table's tally of a property (a shard's, in a merge).
    pub fn add_tally(&mut self, t: PropertyTally) {
        match self.by_message.get_mut(&t.message) {
            Some(m) => {
                m.runs_hit += t.runs_hit;
                m.runs_true += t.runs_true;
                m.runs_false += t.runs_false;
                m.in_catalog |= t.in_catalog;
                if m.location.is_none() {
                    m.location = t.location;
                }
            }
            None => {
                self.by_message.insert(t.message.clone(), t);
            }
        }
    }

    /// What fails the sweep as a whole, in message order.
    pub fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        for t in self.by_message.values() {
            let (message, kind, location) = (t.message.clone(), t.kind, t.location.clone());
            if t.kind.must_hit() && t.runs_hit == 0 {
                out.push(Finding::NeverReached { message, kind, location });
            } else if t.kind == PropertyKind::Sometimes && t.runs_true == 0 {
                out.push(Finding::NeverTrue { message, kind, location });
            }
        }
        out
    }
}

/// `.seedfall/last-run/<config>.json`: what the last sweep of a config
/// found, for tools that show results beside the code (the daemon's lenses).
/// Version 2: source files are relative to the config's folder (`paths`).
pub const LAST_RUN_VERSION: u32 = 2;

#[derive(Serialize)]
struct LastRun<'a> {
    version: u32,
    config: &'a str,
    seeds: String,
    runs: u64,
    failed: u64,
    properties: Vec<serde_json::Value>,
    findings: Vec<serde_json::Value>,
}

pub fn last_run_path(config: &seedfall_sim::Config) -> std::path::PathBuf {
    config.dir().join(".seedfall").join("last-run").join(format!("{}.json", config.name))
}

/// The node whose sources hold a tallied property: the one the catalog names
/// for its message, else the config's first node (a property met only at run
/// time is not in the catalog).
pub fn tally_node(program: &seedfall_sim::Program, t: &PropertyTally) -> Option<String> {
    program.catalog.iter().find(|e| e.message == t.message).map(|e| e.node.clone())
        .or_else(|| program.config.nodes.first().map(|n| n.name.clone()))
}

/// Where a tallied property sits on this machine, if known.
pub fn tally_source(project: &crate::Project, t: &PropertyTally) -> Option<crate::artifacts::Source> {
    let raw = t.location.as_deref()?;
    crate::artifacts::source(project, &tally_node(&project.program, t)?, raw)
}

/// Writes last-run. `source` says where each property is (`tally_source`
/// with a project at hand; a merge has what its shards recorded), already
/// relative to the config's folder (`Source::recorded`).
pub fn save_last_run(config: &seedfall_sim::Config, seeds: &str, runs: u64, failed: u64, table: &PropertyTable, source: &dyn Fn(&PropertyTally) -> Option<crate::artifacts::Source>) -> Result<(), String> {
    let with_source = |v: serde_json::Value, t: &PropertyTally| {
        let mut v = v;
        v["source"] = serde_json::to_value(source(t)).unwrap();
        v
    };
    let properties = table.by_message.values().map(|t| with_source(serde_json::to_value(t).unwrap(), t)).collect();
    let findings = table
        .findings()
        .iter()
        .map(|f| {
            let message = match f {
                Finding::NeverReached { message, .. } | Finding::NeverTrue { message, .. } => message,
            };
            with_source(serde_json::to_value(f).unwrap(), &table.by_message[message])
        })
        .collect();
    let doc = LastRun { version: LAST_RUN_VERSION, config: &config.name, seeds: seeds.to_string(), runs, failed, properties, findings };
    let path = last_run_path(config);
    crate::cache::write_atomic(&path, &serde_json::to_vec_pretty(&doc).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
