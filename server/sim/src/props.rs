//! Properties: what a guest asserts about itself, and what a run makes of it.
//!
//! Semantics follow Antithesis (users know them): `always` must hold every
//! time and be reached; `always_or_unreachable` must hold when reached;
//! `sometimes` must be true at least once in a sweep; `reachable` must be
//! reached in a sweep; `unreachable` must never be reached. A run fails at
//! once on a false always/always_or_unreachable or a reached unreachable; the
//! sweep-level verdicts (never reached, never true) are decided above, over
//! many runs, against the catalog of every property in the program.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bound on distinct properties per run (a guest minting messages in a loop).
pub const PROPERTIES_MAX: usize = 10_000;
/// Bound on the details kept with a property evaluation.
pub const DETAILS_BYTES_MAX: usize = 8 << 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PropertyKind {
    Always,
    AlwaysOrUnreachable,
    Sometimes,
    Reachable,
    Unreachable,
}

impl PropertyKind {
    pub fn from_abi(kind: u32) -> Option<PropertyKind> {
        Some(match kind {
            0 => PropertyKind::Always,
            1 => PropertyKind::AlwaysOrUnreachable,
            2 => PropertyKind::Sometimes,
            3 => PropertyKind::Reachable,
            4 => PropertyKind::Unreachable,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            PropertyKind::Always => "always",
            PropertyKind::AlwaysOrUnreachable => "always_or_unreachable",
            PropertyKind::Sometimes => "sometimes",
            PropertyKind::Reachable => "reachable",
            PropertyKind::Unreachable => "unreachable",
        }
    }

    pub fn from_name(name: &str) -> Option<PropertyKind> {
        [Self::Always, Self::AlwaysOrUnreachable, Self::Sometimes, Self::Reachable, Self::Unreachable]
            .into_iter()
            .find(|k| k.name() == name)
    }

    /// Whether a sweep in which it never ran fails.
    pub fn must_hit(self) -> bool {
        matches!(self, PropertyKind::Always | PropertyKind::Sometimes | PropertyKind::Reachable)
    }

    /// Whether this evaluation fails the run at once.
    pub fn fails_run(self, cond: bool) -> bool {
        match self {
            PropertyKind::Always | PropertyKind::AlwaysOrUnreachable => !cond,
            PropertyKind::Unreachable => true,
            PropertyKind::Sometimes | PropertyKind::Reachable => false,
        }
    }
}

/// One evaluation, as a guest reported it.
#[derive(Clone, Debug)]
pub struct Evaluation {
    pub kind: PropertyKind,
    pub cond: bool,
    pub message: String,
    pub details: String,
    pub location: Option<String>,
}

/// What one run saw of one property.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PropertyRun {
    pub kind: PropertyKind,
    pub hits: u64,
    pub trues: u64,
    pub location: Option<String>,
    /// Virtual time it was first true, for explore's branching.
    pub first_true_ns: Option<u64>,
    #[serde(default)]
    pub first_false_ns: Option<u64>,
    pub first_hit_ns: u64,
}

/// A property the program contains, found before any run.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CatalogEntry {
    pub kind: PropertyKind,
    pub message: String,
    /// `file:line`, as the catalog source gave it (resolved for display above).
    pub location: String,
    /// The node whose program holds it.
    pub node: String,
}

/// The properties of one run, by message.
#[derive(Debug, Default)]
pub struct RunProperties {
    pub by_message: BTreeMap<String, PropertyRun>,
    pub dropped: u64,
}

impl RunProperties {
    pub fn record(&mut self, e: &Evaluation, now_ns: u64) {
        if !self.by_message.contains_key(&e.message) && self.by_message.len() >= PROPERTIES_MAX {
            self.dropped += 1;
            return;
        }
        let entry = self.by_message.entry(e.message.clone()).or_insert_with(|| PropertyRun {
            kind: e.kind,
            hits: 0,
            trues: 0,
            location: e.location.clone(),
            first_true_ns: None,
            first_false_ns: None,
            first_hit_ns: now_ns,
        });
        entry.hits += 1;
        let truth = match e.kind {
            PropertyKind::Reachable => true,
            PropertyKind::Unreachable => false,
            _ => e.cond,
        };
        if truth {
            entry.trues += 1;
            entry.first_true_ns.get_or_insert(now_ns);
        } else {
            entry.first_false_ns.get_or_insert(now_ns);
        }
        if entry.location.is_none() {
            entry.location = e.location.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(kind: PropertyKind, cond: bool) -> Evaluation {
        Evaluation { kind, cond, message: "m".into(), details: String::new(), location: Some("a.go:3".into()) }
    }

    #[test]
    fn which_evaluations_fail_a_run() {
        assert!(PropertyKind::Always.fails_run(false));
        assert!(!PropertyKind::Always.fails_run(true));
        assert!(PropertyKind::AlwaysOrUnreachable.fails_run(false));
        assert!(!PropertyKind::Sometimes.fails_run(false));
        assert!(!PropertyKind::Reachable.fails_run(true));
        assert!(PropertyKind::Unreachable.fails_run(true));
        assert!(PropertyKind::Sometimes.must_hit() && !PropertyKind::AlwaysOrUnreachable.must_hit() && !PropertyKind::Unreachable.must_hit());
    }

    #[test]
    fn counts_hits_and_truths() {
        let mut p = RunProperties::default();
        p.record(&eval(PropertyKind::Sometimes, false), 5);
        p.record(&eval(PropertyKind::Sometimes, true), 9);
        p.record(&eval(PropertyKind::Sometimes, true), 12);
        let r = &p.by_message["m"];
        assert_eq!((r.hits, r.trues, r.first_hit_ns, r.first_true_ns), (3, 2, 5, Some(9)));
    }
}
