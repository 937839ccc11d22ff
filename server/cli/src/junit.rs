//! `-junit FILE`: a sweep's results as JUnit XML, the format CI systems
//! show as tests (GitHub Actions reporters, GitLab's test report, Jenkins'
//! junit step). One test case per finding (always a failure: runs failed
//! that way), per property (a failure when it fails the sweep) and per
//! pinned regression (a failure when it still fails and -fail-on-pinned is
//! given, else skipped while it still fails).
use seedfall_search::sweep_result::{Block, Place, SweepResult};
use std::fmt::Write;

/// One `<testcase>`.
pub struct Case {
    pub class: String,
    pub name: String,
    /// `path:line`, split into the `file` and `line` attributes.
    pub place: String,
    pub outcome: CaseOutcome,
}

pub enum CaseOutcome {
    Pass,
    Fail { kind: String, message: String, text: String },
    Skipped { message: String },
}

/// The XML of one suite of cases.
pub fn document(suite: &str, seconds: f64, cases: &[Case]) -> String {
    let failures = cases.iter().filter(|c| matches!(c.outcome, CaseOutcome::Fail { .. })).count();
    let skipped = cases.iter().filter(|c| matches!(c.outcome, CaseOutcome::Skipped { .. })).count();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(x, "<testsuites name=\"seedfall\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{seconds:.3}\">", cases.len());
    let _ = writeln!(x, "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{seconds:.3}\">", esc(suite), cases.len());
    for c in cases {
        let (file, line) = match c.place.rsplit_once(':') {
            Some((f, l)) if !f.is_empty() && l.parse::<u32>().is_ok() => (f.to_string(), Some(l.to_string())),
            _ => (c.place.clone(), None),
        };
        let mut attrs = format!("classname=\"{}\" name=\"{}\"", esc(&c.class), esc(&c.name));
        if !file.is_empty() {
            let _ = write!(attrs, " file=\"{}\"", esc(&file));
        }
        if let Some(l) = line {
            let _ = write!(attrs, " line=\"{l}\"");
        }
        match &c.outcome {
            CaseOutcome::Pass => {
                let _ = writeln!(x, "    <testcase {attrs}/>");
            }
            CaseOutcome::Fail { kind, message, text } => {
                let _ = writeln!(x, "    <testcase {attrs}>\n      <failure type=\"{}\" message=\"{}\">{}</failure>\n    </testcase>", esc(kind), esc(message), esc(text));
            }
            CaseOutcome::Skipped { message } => {
                let _ = writeln!(x, "    <testcase {attrs}>\n      <skipped message=\"{}\"/>\n    </testcase>", esc(message));
            }
        }
    }
    x.push_str("  </testsuite>\n</testsuites>\n");
    x
}

/// Text as XML character data or an attribute value. Characters XML 1.0
/// cannot hold (most control characters) are shown escaped, as on the
/// terminal (`output::safe`).
pub fn esc(text: &str) -> String {
    let shown = crate::output::safe(text);
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' => out.push_str("&#9;"),
            '\n' => out.push_str("&#10;"),
            c if c == '\u{fffe}' || c == '\u{ffff}' => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// What the cases are made of: a sweep's report, a merge's, an exploration's.
pub struct Facts<'a> {
    pub config: &'a str,
    /// The config's name: test cases are classed under it.
    pub name: &'a str,
    pub found: &'a seedfall_search::finding::Findings,
    pub blocks: &'a std::collections::BTreeMap<String, Block>,
    pub table: &'a seedfall_search::properties::PropertyTable,
    pub places: &'a std::collections::BTreeMap<String, Place>,
    pub pins: Option<&'a seedfall_search::pins::PinReport>,
}

impl<'a> Facts<'a> {
    pub fn of(report: &'a SweepResult) -> Facts<'a> {
        Facts { config: &report.config, name: &report.name, found: &report.found, blocks: &report.blocks, table: &report.table, places: &report.places, pins: Some(&report.pins) }
    }
}

/// The cases of a sweep's (or exploration's) results.
pub fn cases(facts: &Facts, fail_on_pinned: bool) -> Vec<Case> {
    let class = |what: &str| format!("seedfall.{}.{what}", facts.name);
    let mut cases = Vec::new();
    for f in facts.found.ordered() {
        let block = facts.blocks.get(&f.id);
        let mut text = block.map(|b| b.text.clone()).unwrap_or_default();
        let seeds: Vec<String> = f.seeds.iter().take(20).map(u64::to_string).collect();
        let _ = writeln!(text, "{} failing run{}, seeds {}{}", f.count, if f.count == 1 { "" } else { "s" }, seeds.join(", "), if f.count > 20 { ", ..." } else { "" });
        if let Some(first) = f.shortest.first() {
            let faults = block.and_then(|b| b.folder.as_ref()).filter(|p| std::path::Path::new(p).is_dir()).map(|p| format!(" -faults {p}/faults.json")).unwrap_or_default();
            let _ = writeln!(text, "replay it: seedfall replay -c {} -seed {}{faults}", facts.config, first.seed);
        }
        let place = block.map(|b| b.place.clone()).unwrap_or_default();
        let message = f.shortest.first().map(|r| r.message.clone()).unwrap_or_default();
        cases.push(Case { class: class("findings"), name: f.title.clone(), place, outcome: CaseOutcome::Fail { kind: seedfall_search::finding::kind_name(f.signature.kind), message, text } });
    }
    let findings = facts.table.findings();
    for t in facts.table.by_message.values() {
        let name = format!("{} \"{}\"", t.kind.name(), t.message);
        let place = seedfall_search::sweep_result::place_text(facts.places, t);
        let verdict = findings.iter().find_map(|f| match f {
            seedfall_search::properties::Finding::NeverReached { message, .. } if *message == t.message => Some(("never_reached", "never reached in any run")),
            seedfall_search::properties::Finding::NeverTrue { message, .. } if *message == t.message => Some(("never_true", "never true in any run")),
            _ => None,
        });
        let counts = format!("hit in {} runs, true in {}, false in {}", t.runs_hit, t.runs_true, t.runs_false);
        let outcome = if let Some((kind, message)) = verdict {
            CaseOutcome::Fail { kind: kind.into(), message: message.into(), text: counts }
        } else if crate::output::tally_fails(t, &findings) {
            CaseOutcome::Fail { kind: "failed".into(), message: format!("failed in {} runs", if t.kind == seedfall_sim::props::PropertyKind::Unreachable { t.runs_hit } else { t.runs_false }), text: counts }
        } else {
            CaseOutcome::Pass
        };
        cases.push(Case { class: class("properties"), name, place, outcome });
    }
    for p in facts.pins.map(|p| p.results.as_slice()).unwrap_or_default() {
        let outcome = match (p.still_failing, fail_on_pinned) {
            (false, _) => CaseOutcome::Pass,
            (true, true) => CaseOutcome::Fail { kind: "pinned".into(), message: format!("still failing: {}", p.expected.describe()), text: p.path.clone() },
            (true, false) => CaseOutcome::Skipped { message: format!("still failing (pass -fail-on-pinned to fail on it): {}", p.expected.describe()) },
        };
        cases.push(Case { class: class("pins"), name: p.name.clone(), place: String::new(), outcome });
    }
    cases
}

/// Writes the JUnit XML of a sweep, atomically.
pub fn write_sweep(path: &std::path::Path, report: &SweepResult, fail_on_pinned: bool) -> Result<(), String> {
    let suite = format!("seedfall run {} seeds {}", report.config, report.seeds);
    let xml = document(&suite, report.summary.wall_ns as f64 / 1e9, &cases(&Facts::of(report), fail_on_pinned));
    write(path, &xml)
}

pub fn write(path: &std::path::Path, xml: &str) -> Result<(), String> {
    seedfall_search::cache::write_atomic(path, xml.as_bytes()).map_err(|e| format!("-junit {}: cannot write it: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_what_xml_cannot_hold() {
        assert_eq!(esc("a<b & \"c\"\n"), "a&lt;b &amp; &quot;c&quot;&#10;");
        assert_eq!(esc("bell\x07"), "bell\\u{7}");
    }

    #[test]
    fn counts_and_attributes() {
        let cases = vec![
            Case { class: "seedfall.x.findings".into(), name: "kv: panic".into(), place: "main.go:12".into(), outcome: CaseOutcome::Fail { kind: "panic".into(), message: "m".into(), text: "t".into() } },
            Case { class: "seedfall.x.properties".into(), name: "always \"ok\"".into(), place: String::new(), outcome: CaseOutcome::Pass },
        ];
        let x = document("s", 1.5, &cases);
        assert!(x.contains("tests=\"2\" failures=\"1\""), "{x}");
        assert!(x.contains("file=\"main.go\" line=\"12\""), "{x}");
        assert!(x.contains("name=\"always &quot;ok&quot;\"/>"), "{x}");
    }
}
