//! What the daemon publishes as diagnostics, derived from the state:
//! - a config error, at the JSON path it names (key or value);
//! - a failure, as an Error at the source line of the property or panic,
//!   with node instance, seed and virtual time, and the schedule and trace
//!   as related information;
//! - a must-hit property never reached, and a Sometimes never true, as
//!   Warnings at the property (from the last sweep);
//! - stale corpus entries, as Information on the config.
use crate::jsonpath;
use crate::protocol::*;
use crate::state::{ConfigView, State};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn diag(range: Range, severity: DiagnosticSeverity, message: String, related: Option<Vec<DiagnosticRelatedInformation>>) -> Diagnostic {
    Diagnostic {
        range,
        severity: Some(severity),
        source: Some("seedfall".into()),
        message,
        related_information: related,
        ..Default::default()
    }
}

fn file_location(p: &Path, message: &str) -> Option<DiagnosticRelatedInformation> {
    Some(DiagnosticRelatedInformation { location: Location { uri: uri(p)?, range: line_range(0) }, message: message.to_string() })
}

fn config_error(c: &ConfigView, e: &seedfall_sim::ConfigError) -> Diagnostic {
    let prefer_key = e.message.starts_with("unknown field");
    let (a, b) = jsonpath::locate(&c.text, &e.json_path, prefer_key);
    let (l1, c1) = jsonpath::position(&c.text, a);
    let (l2, c2) = jsonpath::position(&c.text, b);
    let range = Range { start: Position { line: l1, character: c1 }, end: Position { line: l2, character: c2 } };
    diag(range, DiagnosticSeverity::ERROR, format!("{}: {}", e.json_path, e.message), None)
}

/// Diagnostics per file, for every config in the state.
pub fn compute(state: &State) -> BTreeMap<PathBuf, Vec<Diagnostic>> {
    let mut out: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    for c in state.configs.iter() {
        let c = c.value();
        out.entry(c.path.clone()).or_default();
        match &c.parsed {
            Err(e) => out.entry(c.path.clone()).or_default().push(config_error(c, e)),
            Ok(config) => {
                // One diagnostic per finding at its line, naming its shortest
                // failing seed and counting every seed of the last sweep.
                let mut groups: BTreeMap<(PathBuf, u32, String), Vec<&crate::state::FailureView>> = BTreeMap::new();
                for f in &c.failures {
                    let (file, line) = f.source.clone().unwrap_or((c.path.clone(), 1));
                    groups.entry((file, line, f.finding.clone())).or_default().push(f);
                }
                for ((file, line, _), mut fs) in groups {
                    fs.sort_by_key(|f| (f.time_ns, f.seed));
                    let f = fs[0];
                    let seeds = f.finding_seeds.unwrap_or(0).max(fs.len() as u64);
                    let more = if seeds > 1 { format!(" and {} more seed{}", seeds - 1, if seeds == 2 { "" } else { "s" }) } else { String::new() };
                    let details = f.details.as_ref().map(|d| format!(" {d}")).unwrap_or_default();
                    let durability = f.durability.as_ref().map(|d| format!("; {d}")).unwrap_or_default();
                    let hint = f.hint.as_ref().map(|h| format!("\nhint: {h}")).unwrap_or_default();
                    let message = format!("{}: {}{details} (seed {}{more}, t={}, {}{durability}){hint}", f.node, f.message, f.seed, seedfall_sim::VTime(f.time_ns), config.name);
                    let related = [file_location(&f.folder.join("faults.json"), "schedule (replay with -faults)"), file_location(&f.folder.join("trace.jsonl"), "trace")]
                        .into_iter()
                        .flatten()
                        .collect();
                    out.entry(file).or_default().push(diag(line_range(line.saturating_sub(1)), DiagnosticSeverity::ERROR, message, Some(related)));
                }
                if let Some(last) = &c.last_run {
                    for f in last["findings"].as_array().into_iter().flatten() {
                        let what = if f["finding"] == "never_true" { "never true" } else { "never reached" };
                        let (Some(file), Some(line)) = (f["source"]["file"].as_str(), f["source"]["line"].as_u64()) else { continue };
                        let message = format!("{what}: {} \"{}\" (last sweep of {}, seeds {})", f["kind"].as_str().unwrap_or(""), f["message"].as_str().unwrap_or(""), config.name, last["seeds"].as_str().unwrap_or(""));
                        out.entry(c.resolve(file)).or_default().push(diag(line_range(line.saturating_sub(1) as u32), DiagnosticSeverity::WARNING, message, None));
                    }
                }
                if !c.stale_corpus.is_empty() {
                    let message = format!("{} stale corpus entries are skipped (they no longer fit this config or cannot be read): {}", c.stale_corpus.len(), c.stale_corpus.join("; "));
                    out.entry(c.path.clone()).or_default().push(diag(line_range(0), DiagnosticSeverity::INFORMATION, message, None));
                }
            }
        }
    }
    out
}
