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
/// Bound on a property's message and on its location.
pub const PROPERTY_TEXT_BYTES_MAX: usize = 4096;
/// Bound on a `guide` name, as on a property message.
pub const GUIDE_NAME_BYTES_MAX: usize = PROPERTY_TEXT_BYTES_MAX;
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
    /// The kind of an `assert` call: its low 8 bits (bits 8-15 carry a
    /// numeric form's comparison, [`Comparison::from_abi`]; the rest are
    /// reserved), so the kinds 0-4 older guests pass mean what they did.
    pub fn from_abi(kind: u32) -> Option<PropertyKind> {
        Some(match kind & 0xff {
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

/// The comparison of a numeric property (`AlwaysLessThan`, ...), passed in
/// bits 8-15 of the `assert` call's kind (docs/abi.md): 1 `>`, 2 `>=`, 3 `<`,
/// 4 `<=`; 0 (or an unknown value) for a plain property.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Greater,
    GreaterOrEqual,
    Less,
    LessOrEqual,
}

impl Comparison {
    pub fn from_abi(kind: u32) -> Option<Comparison> {
        Some(match (kind >> 8) & 0xff {
            1 => Comparison::Greater,
            2 => Comparison::GreaterOrEqual,
            3 => Comparison::Less,
            4 => Comparison::LessOrEqual,
            _ => return None,
        })
    }

    /// Which way `left - right` is guided for a property of `kind` with this
    /// comparison: toward the bound where an always breaks (an
    /// `Always(left > right)` breaks when the gap gets small: minimize), or
    /// where a sometimes comes true (`Sometimes(left > right)`: maximize).
    /// `Some(true)` to maximize; `None` for kinds without a condition.
    pub fn maximize(self, kind: PropertyKind) -> Option<bool> {
        let greater = matches!(self, Comparison::Greater | Comparison::GreaterOrEqual);
        match kind {
            PropertyKind::Always | PropertyKind::AlwaysOrUnreachable => Some(!greater),
            PropertyKind::Sometimes => Some(greater),
            PropertyKind::Reachable | PropertyKind::Unreachable => None,
        }
    }
}

/// `left - right` from a numeric property's details (`"left"` and `"right"`,
/// JSON numbers as the Go SDK and the Antithesis SDK write them, or numeric
/// strings as the Rust SDK's `{:?}` does). Two integers are subtracted
/// exactly before the conversion to f64. `None` when either is missing or
/// not a number, or the gap is not finite. Only those two keys are decoded
/// (the rest is skipped, not built); when a key appears twice, the last one
/// counts (the Rust SDK appends its operands after the caller's keys).
pub fn numeric_gap(details: &str) -> Option<f64> {
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    struct Operands(Option<serde_json::Value>, Option<serde_json::Value>);
    struct OperandsVisitor;
    impl<'de> Visitor<'de> for OperandsVisitor {
        type Value = Operands;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Operands, A::Error> {
            let mut out = Operands(None, None);
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                match &*key {
                    "left" => out.0 = Some(map.next_value()?),
                    "right" => out.1 = Some(map.next_value()?),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(out)
        }
    }
    impl<'de> Deserialize<'de> for Operands {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_map(OperandsVisitor)
        }
    }
    let Operands(Some(l), Some(r)) = serde_json::from_str::<Operands>(details).ok()? else { return None };
    operands_gap(&l, &r)
}

/// `left - right` of two operands as [`numeric_gap`] reads them.
pub fn operands_gap(left: &serde_json::Value, right: &serde_json::Value) -> Option<f64> {
    enum Operand {
        Int(i128),
        Float(f64),
    }
    fn operand(v: &serde_json::Value) -> Option<Operand> {
        match v {
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(|i| Operand::Int(i.into()))
                .or_else(|| n.as_u64().map(|u| Operand::Int(u.into())))
                .or_else(|| n.as_f64().map(Operand::Float)),
            serde_json::Value::String(s) => s.parse::<i128>().ok().map(Operand::Int).or_else(|| s.parse::<f64>().ok().map(Operand::Float)),
            _ => None,
        }
    }
    let gap = match (operand(left)?, operand(right)?) {
        (Operand::Int(a), Operand::Int(b)) => a.checked_sub(b).map_or(a as f64 - b as f64, |d| d as f64),
        (Operand::Int(a), Operand::Float(b)) => a as f64 - b,
        (Operand::Float(a), Operand::Int(b)) => a - b as f64,
        (Operand::Float(a), Operand::Float(b)) => a - b,
    };
    gap.is_finite().then_some(gap)
}

/// Bound on distinct watermarks (a name and a direction) per run.
pub const WATERMARKS_MAX: usize = 1_000;

/// The watermarks of one run: per (name, maximize), the best value and when
/// it was first reached, over every node instance.
#[derive(Debug, Default)]
pub struct Watermarks {
    /// By name: the minimize and the maximize watermark, in that order.
    by_name: BTreeMap<String, [Option<Watermark>; 2]>,
    len: usize,
    /// Guidance for new names past [`WATERMARKS_MAX`], ignored.
    pub dropped: u64,
}

impl Watermarks {
    /// One guided value at virtual time `at_ns`, scheduler step `step`. NaN
    /// and infinities are ignored (JSON, where watermarks are kept, has
    /// neither). A value replaces the watermark only when strictly better,
    /// so `at_ns`/`step` say when the best was first reached.
    pub fn record(&mut self, name: &str, maximize: bool, value: f64, at_ns: u64, step: u64) {
        if !value.is_finite() {
            return;
        }
        if let Some(Some(w)) = self.by_name.get_mut(name).map(|pair| &mut pair[usize::from(maximize)]) {
            if (maximize && value > w.value) || (!maximize && value < w.value) {
                (w.value, w.at_ns, w.step) = (value, at_ns, step);
            }
            return;
        }
        if self.len >= WATERMARKS_MAX {
            self.dropped += 1;
            return;
        }
        self.len += 1;
        let pair = self.by_name.entry(name.to_string()).or_default();
        pair[usize::from(maximize)] = Some(Watermark { name: name.to_string(), maximize, value, at_ns, step });
    }

    /// The watermarks, sorted by (name, maximize).
    pub fn into_vec(self) -> Vec<Watermark> {
        self.by_name.into_values().flatten().flatten().collect()
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
    /// Numeric guidance: `seedfall.guide` calls, numeric properties' gaps,
    /// the Antithesis SDK's guidance lines.
    pub watermarks: Watermarks,
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
    fn old_kinds_stay_valid_and_the_comparison_rides_in_bits_8_to_15() {
        for k in 0..5u32 {
            assert_eq!(PropertyKind::from_abi(k), PropertyKind::from_abi(k | 3 << 8));
            assert_eq!(Comparison::from_abi(k), None);
        }
        assert_eq!(PropertyKind::from_abi(5), None);
        assert_eq!(PropertyKind::from_abi(2 | 1 << 8), Some(PropertyKind::Sometimes));
        assert_eq!(Comparison::from_abi(2 | 1 << 8), Some(Comparison::Greater));
        assert_eq!(Comparison::from_abi(4 << 8), Some(Comparison::LessOrEqual));
        assert_eq!(Comparison::from_abi(9 << 8), None);
        // The directions table of docs/properties.md.
        use Comparison::*;
        use PropertyKind::*;
        let table = [
            (Greater, Always, false),
            (GreaterOrEqual, Always, false),
            (Less, Always, true),
            (LessOrEqual, AlwaysOrUnreachable, true),
            (Greater, Sometimes, true),
            (GreaterOrEqual, Sometimes, true),
            (Less, Sometimes, false),
            (LessOrEqual, Sometimes, false),
        ];
        for (c, kind, max) in table {
            assert_eq!(c.maximize(kind), Some(max), "{c:?} {kind:?}");
        }
        assert_eq!(Less.maximize(Reachable), None);
    }

    #[test]
    fn numeric_gaps_from_go_and_rust_details() {
        assert_eq!(numeric_gap(r#"{"left":3,"right":10}"#), Some(-7.0));
        assert_eq!(numeric_gap(r#"{"op":"w","left":21.5,"right":20}"#), Some(1.5));
        assert_eq!(numeric_gap(r#"{"left":18446744073709551615,"right":18446744073709551614}"#), Some(1.0));
        assert_eq!(numeric_gap(r#"{"left":-9223372036854775808,"right":18446744073709551615}"#), Some(-27670116110564327423.0));
        assert_eq!(numeric_gap(r#"{"node":"\"a\"","left":"-3","right":"0"}"#), Some(-3.0));
        assert_eq!(numeric_gap(r#"{"left":"2.5","right":"1e0"}"#), Some(1.5));
        // The last of two keys counts; NaN, infinities, text: no gap.
        assert_eq!(numeric_gap(r#"{"left":"mine","x":{"left":[1]},"left":"5","right":"1"}"#), Some(4.0));
        assert_eq!(numeric_gap(r#"{"left":"NaN","right":"-Inf"}"#), None);
        assert_eq!(numeric_gap(r#"{"left":1,"right":"+Inf"}"#), None);
        assert_eq!(numeric_gap(r#"{"left":"Some(1)","right":"1"}"#), None);
        assert_eq!(numeric_gap(r#"{"left":1}"#), None);
        assert_eq!(numeric_gap(""), None);
        assert_eq!(numeric_gap("[1,2]"), None);
    }

    #[test]
    fn watermarks_keep_the_first_time_of_the_best_value() {
        let mut w = Watermarks::default();
        for (v, t) in [(3.0, 10), (7.0, 20), (5.0, 30), (7.0, 40), (f64::NAN, 50), (f64::INFINITY, 60), (f64::NEG_INFINITY, 70)] {
            w.record("x", true, v, t, t / 10);
            w.record("x", false, v, t, t / 10);
        }
        w.record("a", true, -1.0, 5, 5);
        let got: Vec<_> = w.into_vec().into_iter().map(|m| (m.name, m.maximize, m.value, m.at_ns, m.step)).collect();
        assert_eq!(got, vec![("a".to_string(), true, -1.0, 5, 5), ("x".to_string(), false, 3.0, 10, 1), ("x".to_string(), true, 7.0, 20, 2)]);
        let mut w = Watermarks::default();
        for i in 0..WATERMARKS_MAX + 5 {
            w.record(&format!("n{i:04}"), true, 1.0, 0, 0);
        }
        w.record("n0000", true, 2.0, 9, 9);
        w.record("n0000", false, 2.0, 9, 9);
        assert_eq!(w.dropped, 6, "a new direction of a known name is a new watermark");
        let v = w.into_vec();
        assert_eq!(v.len(), WATERMARKS_MAX);
        assert_eq!((v[0].name.as_str(), v[0].value, v[0].at_ns), ("n0000", 2.0, 9));
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

/// The best value one run reached of one guided quantity: a `seedfall.guide`
/// call's value (`sim.Maximize`/`sim.Minimize`), a numeric property's
/// `left - right` (named by its message), or an Antithesis SDK guidance
/// line's. `value` is the maximum over the run when `maximize`, else the
/// minimum; `at_ns` (virtual time) and `step` (scheduler step) are when it
/// was first reached.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Watermark {
    pub name: String,
    pub maximize: bool,
    pub value: f64,
    pub at_ns: u64,
    pub step: u64,
}
