//! Findings: failing runs grouped by what failed, not by the numbers in the
//! message. One bug in one program fails hundreds of seeds with as many
//! messages ("counter is 21", "counter is 22"); they are one finding.
//!
//! The signature of a failure is:
//! - a property: its message template and location (the property's
//!   message is fixed by the program, its details are not part of it);
//! - a panic or trap: its location and its message template;
//! - an exit code, a watchdog or a limit: the node and the kind.
//!
//! A template is the message with numbers, hex ids, addresses and quoted
//! values replaced by placeholders (`N`, `X`, `"…"`). Nodes are compared by
//! name without the replica (`client#2` is `client`).
use crate::cache::hash_hex;
use seedfall_sim::failure::{Failure, FailureKind};
use seedfall_sim::Outcome;
use serde::Serialize;
use std::collections::BTreeMap;

/// The message with what varies between runs of the same bug replaced.
pub fn template(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::with_capacity(message.len());
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        // Quoted values: "..." and '...' (a lone apostrophe, as in "can't",
        // has no closing quote before the next space and stays).
        if c == '"' || c == '`' || (c == '\'' && !prev_is_alnum(&chars, i)) {
            if let Some(end) = closing(&chars, i + 1, c) {
                out.push(c);
                out.push('…');
                out.push(c);
                i = end + 1;
                continue;
            }
        }
        // A sign belongs to the number: -31 and 5 are the same value slot.
        if c == '-' && chars.get(i + 1).is_some_and(char::is_ascii_digit) && !prev_is_alnum(&chars, i) {
            i += 1;
            continue;
        }
        if c.is_ascii_digit() {
            // 0x-prefixed hex, or a run of digits (with a decimal part).
            if c == '0' && matches!(chars.get(i + 1), Some('x' | 'X')) && chars.get(i + 2).is_some_and(char::is_ascii_hexdigit) {
                let mut j = i + 2;
                while j < chars.len() && chars[j].is_ascii_hexdigit() {
                    j += 1;
                }
                out.push('X');
                i = j;
                continue;
            }
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_hexdigit() || (chars[j] == '.' && chars.get(j + 1).is_some_and(char::is_ascii_digit))) {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            let hex_id = word.len() >= 8 && word.chars().any(|c| c.is_ascii_alphabetic()) && !word.contains('.');
            if hex_id && !chars.get(j).is_some_and(|c| c.is_alphanumeric()) {
                out.push('X');
                i = j;
                continue;
            }
            // Not an id: the number is the digits (and decimals) only.
            let mut k = i;
            while k < chars.len() && (chars[k].is_ascii_digit() || (chars[k] == '.' && chars.get(k + 1).is_some_and(char::is_ascii_digit))) {
                k += 1;
            }
            out.push('N');
            i = k;
            continue;
        }
        // A hex id that starts with a letter (a trace id, a hash).
        if c.is_ascii_hexdigit() && !prev_is_alnum(&chars, i) {
            let mut j = i;
            while j < chars.len() && chars[j].is_ascii_hexdigit() {
                j += 1;
            }
            let word = &chars[i..j];
            if word.len() >= 8 && word.iter().any(char::is_ascii_digit) && !chars.get(j).is_some_and(|c| c.is_alphanumeric()) {
                out.push('X');
                i = j;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

fn prev_is_alnum(chars: &[char], i: usize) -> bool {
    i > 0 && chars[i - 1].is_alphanumeric()
}

/// The index of the quote closing one opened before `from`, if it closes
/// within the same message and within a bound.
fn closing(chars: &[char], from: usize, quote: char) -> Option<usize> {
    const QUOTED_MAX: usize = 4096;
    (from..chars.len().min(from + QUOTED_MAX)).find(|&j| chars[j] == quote && chars[j - 1] != '\\')
}

/// What makes two failures the same finding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Signature {
    pub kind: FailureKind,
    /// The node without its replica number.
    pub node: String,
    /// The message template (empty for exits, watchdogs and limits).
    pub template: String,
    pub location: Option<String>,
}

impl Signature {
    pub fn of(f: &Failure) -> Signature {
        let node = f.node.split('#').next().unwrap_or(&f.node).to_string();
        match f.kind {
            // A property is one line of the program: any node that states it.
            FailureKind::Property => Signature { kind: f.kind, node: String::new(), template: template(&f.message), location: f.location.clone() },
            FailureKind::Panic | FailureKind::Trap => Signature { kind: f.kind, node, template: template(&f.message), location: f.location.clone() },
            FailureKind::Exit | FailureKind::Watchdog | FailureKind::Limit => Signature { kind: f.kind, node, template: String::new(), location: None },
        }
    }

    /// A short stable id (12 hex digits): folder names, the index, pins.
    pub fn id(&self) -> String {
        let kind = serde_json::to_string(&self.kind).unwrap_or_default();
        hash_hex(&[kind.as_bytes(), self.node.as_bytes(), self.template.as_bytes(), self.location.as_deref().unwrap_or("").as_bytes()])[..12].to_string()
    }

    /// One line for people: `property "…"`, `kv: panic: counter is N`.
    pub fn title(&self) -> String {
        let kind = kind_name(self.kind);
        match self.kind {
            FailureKind::Property => format!("property \"{}\"", self.template),
            FailureKind::Panic | FailureKind::Trap => format!("{}: {kind}: {}", self.node, self.template),
            _ => format!("{}: {kind}", self.node),
        }
    }
}

/// A failure kind as it is written in JSON and folder names (`panic`).
pub fn kind_name(kind: FailureKind) -> String {
    serde_json::to_value(kind).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| "failure".into())
}

/// Example messages kept per finding, and seeds listed in its index.
pub const EXAMPLES_MAX: usize = 3;
pub const SEEDS_MAX: usize = 100_000;

/// One failing run of a finding, as the tools need to point at it.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub seed: u64,
    pub time_ns: u64,
    pub steps: u64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
}

impl Run {
    fn of(seed: u64, f: &Failure, steps: u64) -> Run {
        Run { seed, time_ns: f.time_ns, steps, message: f.message.clone(), details: f.details.clone() }
    }

    /// Shorter runs first: earlier failure, then fewer steps, then the seed.
    fn key(&self) -> (u64, u64, u64) {
        (self.time_ns, self.steps, self.seed)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub id: String,
    pub title: String,
    pub signature: Signature,
    /// Failing runs in all.
    pub count: u64,
    /// Every failing seed, in the order they came (up to SEEDS_MAX).
    pub seeds: Vec<u64>,
    /// The shortest failing runs, shortest first (up to the keep count).
    pub shortest: Vec<Run>,
    /// Up to EXAMPLES_MAX runs with distinct messages, first seen first.
    pub examples: Vec<Run>,
}

/// Failing runs of a sweep grouped into findings.
#[derive(Clone, Debug)]
pub struct Findings {
    pub by_id: BTreeMap<String, Finding>,
    keep: usize,
}

/// What adding a failing run did to the kept runs of its finding.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The run is among the shortest: its folder should be written.
    pub keep: bool,
    /// A run it displaced from the shortest: its folder can go.
    pub evicted: Option<u64>,
    /// It is the first run of a new finding.
    pub new: bool,
}

impl Findings {
    /// `keep`: how many of the shortest runs each finding keeps (at least 1).
    pub fn new(keep: usize) -> Findings {
        Findings { by_id: BTreeMap::new(), keep: keep.max(1) }
    }

    pub fn add(&mut self, o: &Outcome) -> Added {
        self.add_run(o.seed, o.failure.as_ref().expect("a failing outcome"), o.stats.steps)
    }

    pub fn add_run(&mut self, seed: u64, f: &Failure, steps: u64) -> Added {
        let signature = Signature::of(f);
        let id = signature.id();
        let run = Run::of(seed, f, steps);
        let mut added = Added::default();
        let finding = self.by_id.entry(id.clone()).or_insert_with(|| {
            added.new = true;
            Finding { id, title: signature.title(), signature, count: 0, seeds: Vec::new(), shortest: Vec::new(), examples: Vec::new() }
        });
        finding.count += 1;
        if finding.seeds.len() < SEEDS_MAX {
            finding.seeds.push(run.seed);
        }
        if finding.examples.len() < EXAMPLES_MAX && finding.examples.iter().all(|e| e.message != run.message || e.details != run.details) {
            finding.examples.push(run.clone());
        }
        let at = finding.shortest.partition_point(|r| r.key() < run.key());
        if at < self.keep {
            finding.shortest.insert(at, run);
            added.keep = true;
            if finding.shortest.len() > self.keep {
                added.evicted = finding.shortest.pop().map(|r| r.seed);
            }
        }
        assert!(finding.shortest.len() <= self.keep);
        added
    }

    /// The id of `o`'s finding when `o` (already added) is now its shortest
    /// run: what the terminal and the report show of the finding.
    pub fn shortest_id(&self, o: &Outcome) -> Option<String> {
        let f = o.failure.as_ref()?;
        let id = Signature::of(f).id();
        (self.by_id.get(&id)?.shortest.first()?.key() == Run::of(o.seed, f, o.stats.steps).key()).then_some(id)
    }

    /// Findings with the most failing runs first.
    pub fn ordered(&self) -> Vec<&Finding> {
        let mut v: Vec<&Finding> = self.by_id.values().collect();
        v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.shortest[0].key().cmp(&b.shortest[0].key())));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_drop_what_varies() {
        assert_eq!(template("counter is 22"), "counter is N");
        assert_eq!(template("account 1 overdrawn: balance -31 after teller 1 moved 52"), "account N overdrawn: balance N after teller N moved N");
        assert_eq!(template("key \"client-1-k5\" lost"), "key \"…\" lost");
        assert_eq!(template("took 1.25ms at 0x7ffe12"), "took Nms at X");
        assert_eq!(template("trace 3972be507224 differs"), "trace X differs");
        assert_eq!(template("can't open k1"), "can't open kN");
        assert_eq!(template("decade"), "decade");
        assert_eq!(template("acknowledged writes survive crashes"), "acknowledged writes survive crashes");
        assert_eq!(template("deadbeef12 and cafe"), "X and cafe");
    }

    fn panic(message: &str, time_ns: u64) -> Failure {
        Failure { kind: FailureKind::Panic, node: "kv#2".into(), message: message.into(), location: Some("main.go:9".into()), details: None, hint: None, time_ns, step: 1 }
    }

    #[test]
    fn one_bug_with_many_numbers_is_one_finding_keeping_the_shortest() {
        let mut f = Findings::new(2);
        assert_eq!(f.add_run(1, &panic("counter is 21", 500), 10), Added { keep: true, evicted: None, new: true });
        assert_eq!(f.add_run(2, &panic("counter is 22", 300), 10), Added { keep: true, evicted: None, new: false });
        assert_eq!(f.add_run(3, &panic("counter is 23", 900), 10), Added { keep: false, evicted: None, new: false });
        assert_eq!(f.add_run(4, &panic("counter is 24", 100), 10), Added { keep: true, evicted: Some(1), new: false });
        assert_eq!(f.by_id.len(), 1);
        let only = f.ordered()[0];
        assert_eq!(only.count, 4);
        assert_eq!(only.seeds, vec![1, 2, 3, 4]);
        assert_eq!(only.shortest.iter().map(|r| r.seed).collect::<Vec<_>>(), vec![4, 2]);
        assert_eq!(only.examples.len(), EXAMPLES_MAX);
        assert_eq!(only.title, "kv: panic: counter is N");
        f.add_run(5, &panic("disk full", 50), 10);
        assert_eq!(f.by_id.len(), 2);
    }
}
