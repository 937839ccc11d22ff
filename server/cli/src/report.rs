//! `-report FILE` (run and explore): a triage report of one sweep, as a
//! self-contained HTML page, or Markdown when FILE ends in `.md`.
//!
//! It says what is new, what still fails and what got fixed: findings (a
//! finding of failing runs (`finding::Signature`), or a property's never-reached /
//! never-true verdict) are tracked across reports in the findings file
//! (`seedfall_search::findings_file`), each one `new`, `ongoing`, `resolved`
//! or `regressed`.
use crate::output;
use seedfall_search::finding::{Finding, Findings};
use seedfall_search::{Project, SweepSummary};
use seedfall_sim::{Outcome, VTime};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The output flags run and explore share.
#[derive(clap::Args)]
pub struct Extras {
    /// Write a CPU profile of seedfall (pprof format) to this file.
    #[arg(long)]
    pub cpuprofile: Option<PathBuf>,
    /// Write a triage report: HTML, or Markdown when the name ends in .md.
    #[arg(long)]
    pub report: Option<PathBuf>,
}
/// Seeds listed per failure group.
pub const SEEDS_SHOWN_MAX: usize = 20;
const TIMELINE_PAGE: &str = include_str!("../../../extension/media/timeline.html");

/// A finding's shortest run, with its trace (for the timeline), and its
/// folder.
pub struct Shortest {
    pub outcome: Outcome,
    pub folder: Option<PathBuf>,
}

pub struct Input<'a> {
    pub project: &'a Project,
    pub seeds: String,
    pub summary: &'a SweepSummary,
    /// The sweep's findings, and each one's shortest run by finding id.
    pub found: &'a Findings,
    pub shortest: &'a BTreeMap<String, Shortest>,
    pub table: &'a seedfall_search::properties::PropertyTable,
    /// Growth rows (`run -until-novelty`) or exploration rounds, as JSON.
    pub exploration: Option<Value>,
}

/// Markdown text: no raw HTML, quotes as they are (finding titles quote
/// their property).
fn esc_md(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

pub fn write(path: &Path, input: &Input) -> Result<(), String> {
    let config = &input.project.program.config;
    let mut current: Vec<String> = groups(input).iter().map(|(f, _)| format!("failure {}", f.title)).collect();
    for f in input.table.findings() {
        current.push(match f {
            seedfall_search::properties::Finding::NeverReached { message, .. } => format!("never reached \"{message}\""),
            seedfall_search::properties::Finding::NeverTrue { message, .. } => format!("never true \"{message}\""),
        });
    }
    let (status, resolved) = seedfall_search::findings_file::track(config.dir(), &current);
    let md = path.extension().is_some_and(|e| e == "md");
    let text = if md { markdown(input, &status, &resolved) } else { html(input, &status, &resolved) };
    seedfall_search::cache::write_atomic(path, text.as_bytes()).map_err(|e| format!("cannot write the report {}: {e}", path.display()))
}

/// The findings with their shortest runs, by title.
fn groups<'a>(input: &Input<'a>) -> Vec<(&'a Finding, &'a Shortest)> {
    let mut v: Vec<_> = input.found.by_id.values().filter_map(|f| Some((f, input.shortest.get(&f.id)?))).collect();
    v.sort_by(|a, b| a.0.title.cmp(&b.0.title));
    v
}

/// The seeds a finding lists.
fn seeds_shown(f: &Finding) -> String {
    f.seeds.iter().take(SEEDS_SHOWN_MAX).map(u64::to_string).collect::<Vec<_>>().join(", ")
}

fn commands(input: &Input, g: &Shortest) -> (String, String) {
    let c = output::relative(&input.project.program.config.path);
    let faults = g.folder.as_ref().map(|f| format!(" -faults {}", output::relative(&f.join("faults.json")))).unwrap_or_default();
    (format!("seedfall replay -c {c} -seed {}{faults}", g.outcome.seed), format!("seedfall shrink -c {c} -seed {}{faults}", g.outcome.seed))
}

fn markdown(input: &Input, status: &BTreeMap<String, String>, resolved: &[String]) -> String {
    let config = &input.project.program.config;
    let s = input.summary;
    let mut out = format!(
        "# seedfall report: {}\n\nconfig `{}`, seeds {}, {} runs, {} failed, {:.1} runs/s, {:.1} virtual s per wall s\n\n",
        config.name, output::relative(&config.path), input.seeds, s.runs, s.failures, s.seeds_per_second, s.virtual_seconds_per_wall_second
    );
    out.push_str("## Failures\n\n");
    let groups = groups(input);
    if groups.is_empty() {
        out.push_str("None.\n\n");
    }
    for (finding, g) in groups {
        let st = status.get(&format!("failure {}", finding.title)).cloned().unwrap_or_default();
        let (replay, shrink) = commands(input, g);
        let f = g.outcome.failure.as_ref().unwrap();
        let durability = g.outcome.model_check.as_ref().map(|m| format!("; {}", output::durability_text(m))).unwrap_or_default();
        out.push_str(&format!("### [{st}] {}\n\n{} seeds ({}); shortest: seed {} failing at t={}{durability}\n\n```\n{replay}\n{shrink}\n```\n\n", esc_md(&finding.title), finding.count, seeds_shown(finding), g.outcome.seed, VTime(f.time_ns)));
    }
    if !resolved.is_empty() {
        out.push_str("## Resolved since the last report\n\n");
        for r in resolved {
            out.push_str(&format!("- {r}\n"));
        }
        out.push('\n');
    }
    out.push_str("## Properties\n\n| property | kind | hit | true | verdict |\n|---|---|---|---|---|\n");
    for t in input.table.by_message.values() {
        let verdict = verdict(t);
        out.push_str(&format!("| {} | {} | {} | {} | {verdict} |\n", t.message, t.kind.name(), t.runs_hit, t.runs_true));
    }
    if let Some(x) = &input.exploration {
        out.push_str("\n## Exploration\n\n| round | runs | new signals | signals | new functions | functions |\n|---|---|---|---|---|---|\n");
        for r in x["rows"].as_array().into_iter().flatten() {
            out.push_str(&format!("| {} | {} | {} | {} | {} | {} |\n", r["round"], r["runs"], r["new_signals"], r["signals"], r["new_functions"], r["functions"]));
        }
        out.push_str(&format!("\nstopped: {}\n", x["stop"].as_str().unwrap_or("")));
    }
    out
}

fn verdict(t: &seedfall_search::properties::PropertyTally) -> &'static str {
    if t.kind.must_hit() && t.runs_hit == 0 {
        "never reached"
    } else if t.kind == seedfall_sim::props::PropertyKind::Sometimes && t.runs_true == 0 {
        "never true"
    } else if t.runs_false > 0 && t.kind.fails_run(false) {
        "failed"
    } else {
        "ok"
    }
}

fn html(input: &Input, status: &BTreeMap<String, String>, resolved: &[String]) -> String {
    let config = &input.project.program.config;
    let s = input.summary;
    let mut body = format!(
        "<header><h1>seedfall report: {}</h1><p>config <code>{}</code> &middot; seeds {} &middot; {} runs &middot; <b>{} failed</b> &middot; {:.1} runs/s &middot; {:.1} virtual s per wall s</p></header>",
        esc(&config.name), esc(&output::relative(&config.path)), esc(&input.seeds), s.runs, s.failures, s.seeds_per_second, s.virtual_seconds_per_wall_second
    );
    body.push_str("<h2>Failures</h2>");
    let groups = groups(input);
    if groups.is_empty() {
        body.push_str("<p class=\"none\">None.</p>");
    }
    for (finding, g) in groups {
        let st = status.get(&format!("failure {}", finding.title)).cloned().unwrap_or_default();
        let (replay, shrink) = commands(input, g);
        let f = g.outcome.failure.as_ref().unwrap();
        let timeline = TIMELINE_PAGE.replace("/*SEEDFALL_DATA*/null", &serde_json::to_string(&json!({ "title": format!("seed {}", g.outcome.seed), "events": g.outcome.trace })).unwrap().replace('<', "\\u003c"));
        body.push_str(&format!(
            "<section class=\"failure\"><h3><span class=\"status {st}\">{st}</span> {}</h3><p>{} seed{} ({}); shortest: seed {} failing at t={}{}{}</p><pre>{}\n{}</pre><iframe class=\"timeline\" sandbox=\"allow-scripts\" srcdoc=\"{}\"></iframe></section>",
            esc(&finding.title), finding.count, if finding.count == 1 { "" } else { "s" }, seeds_shown(finding), g.outcome.seed, VTime(f.time_ns),
            output::display_location(input.project, f).map(|l| format!(" at <code>{}</code>", esc(&l))).unwrap_or_default(),
            g.outcome.model_check.as_ref().map(|m| format!("; {}", esc(&output::durability_text(m)))).unwrap_or_default(),
            esc(&replay), esc(&shrink), esc(&timeline)
        ));
    }
    if !resolved.is_empty() {
        body.push_str("<h2>Resolved since the last report</h2><ul>");
        for r in resolved {
            body.push_str(&format!("<li><span class=\"status resolved\">resolved</span> {}</li>", esc(r)));
        }
        body.push_str("</ul>");
    }
    body.push_str("<h2>Properties</h2><table><tr><th>property</th><th>kind</th><th>hit</th><th>true</th><th>verdict</th></tr>");
    for t in input.table.by_message.values() {
        let v = verdict(t);
        let st = match v {
            "never reached" => status.get(&format!("never reached \"{}\"", t.message)),
            "never true" => status.get(&format!("never true \"{}\"", t.message)),
            _ => None,
        };
        let tag = st.map(|s| format!(" <span class=\"status {s}\">{s}</span>")).unwrap_or_default();
        body.push_str(&format!("<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{v}{tag}</td></tr>", v.replace(' ', "-"), esc(&t.message), t.kind.name(), t.runs_hit, t.runs_true));
    }
    body.push_str("</table>");
    if let Some(x) = &input.exploration {
        body.push_str("<h2>Exploration</h2><table><tr><th>round</th><th>runs</th><th>new signals</th><th>signals</th><th>new functions</th><th>functions</th></tr>");
        for r in x["rows"].as_array().into_iter().flatten() {
            body.push_str(&format!("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", r["round"], r["runs"], r["new_signals"], r["signals"], r["new_functions"], r["functions"]));
        }
        body.push_str(&format!("</table><p>stopped: {}</p>", esc(x["stop"].as_str().unwrap_or(""))));
    }
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>seedfall report: {}</title><style>{}</style></head><body>{body}</body></html>\n",
        esc(&config.name),
        "body{font:14px/1.5 system-ui,sans-serif;margin:24px;color:#1f2328;max-width:1100px}h1{font-size:20px;margin:0}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #d0d7de}h3{font-size:14px}table{border-collapse:collapse;width:100%}td,th{border:1px solid #d0d7de;padding:4px 8px;text-align:left}th{background:#f6f8fa}pre{background:#f6f8fa;padding:8px;border-radius:6px;overflow-x:auto}.status{font-size:11px;text-transform:uppercase;padding:1px 6px;border-radius:8px;color:#fff}.new{background:#cf222e}.regressed{background:#8250df}.ongoing{background:#bf8700}.resolved{background:#1a7f37}tr.never-reached td,tr.never-true td,tr.failed td{background:#fff8c5}iframe.timeline{width:100%;height:260px;border:1px solid #d0d7de;border-radius:6px}.none{color:#57606a}"
    )
}
