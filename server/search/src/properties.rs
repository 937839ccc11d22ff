//! Sweep-level property verdicts: properties aggregated over every run of a
//! sweep, checked against the catalog.
//!
//! A must-hit property (always, sometimes, reachable) that no run reached
//! fails the sweep (`never reached`); a sometimes that was never true fails it
//! (`never true`). Both name the property's source location.
use seedfall_sim::props::{CatalogEntry, PropertyKind};
use seedfall_sim::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
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
