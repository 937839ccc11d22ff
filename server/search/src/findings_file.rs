//! The findings file (`.seedfall/findings.json` next to the config): each
//! finding of a sweep's triage report (`-report`) tracked across reports as
//! `new`, `ongoing`, `resolved` or `regressed`. A finding is named by its
//! text: `failure <title>`, `never reached "<message>"`, `never true
//! "<message>"`.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

pub const FINDINGS_VERSION: u32 = 1;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
struct Tracked {
    status: String,
    first_seen: String,
    last_seen: String,
}

#[derive(Serialize, Deserialize, Default)]
struct FindingsFile {
    version: u32,
    findings: BTreeMap<String, Tracked>,
}

fn now_label() -> String {
    // A label for the report, not an input to anything: wall time is fine here.
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    format!("unix time {secs}")
}

/// Where findings are tracked: under `.seedfall/`, with everything else
/// seedfall writes, so that nothing it writes is named like a config.
pub fn findings_path(config_dir: &Path) -> std::path::PathBuf {
    config_dir.join(".seedfall").join("findings.json")
}

/// Where versions before 0.2 kept it (read once, then removed).
const LEGACY_FINDINGS: &str = "seedfall-findings.json";

/// Updates the findings file; returns each current finding's status, and the resolved ones.
pub fn track(config_dir: &Path, current: &[String]) -> (BTreeMap<String, String>, Vec<String>) {
    let path = findings_path(config_dir);
    let legacy = config_dir.join(LEGACY_FINDINGS);
    let from = if path.is_file() { path.clone() } else { legacy.clone() };
    let mut file: FindingsFile = match seedfall_sim::files::read_text(&from, seedfall_sim::files::JSON_BYTES_MAX, "the findings file") {
        Err(_) => FindingsFile::default(),
        Ok(t) => serde_json::from_str(&t).unwrap_or_else(|e| {
            eprintln!("seedfall: {} cannot be read ({e}); findings are tracked afresh", from.display());
            FindingsFile::default()
        }),
    };
    let stamp = now_label();
    let mut status = BTreeMap::new();
    for f in current {
        let s = match file.findings.get(f).map(|t| t.status.as_str()) {
            None => "new",
            Some("resolved") => "regressed",
            Some(_) => "ongoing",
        };
        status.insert(f.clone(), s.to_string());
        let first = file.findings.get(f).map(|t| t.first_seen.clone()).unwrap_or_else(|| stamp.clone());
        file.findings.insert(f.clone(), Tracked { status: s.into(), first_seen: first, last_seen: stamp.clone() });
    }
    let mut resolved = Vec::new();
    for (name, t) in file.findings.iter_mut() {
        if !current.contains(name) && t.status != "resolved" {
            t.status = "resolved".into();
            resolved.push(name.clone());
        }
    }
    file.version = FINDINGS_VERSION;
    match crate::cache::write_atomic(&path, &serde_json::to_vec_pretty(&file).unwrap()) {
        Ok(()) if from == legacy => {
            let _ = std::fs::remove_file(&legacy);
        }
        Ok(()) => {}
        Err(e) => eprintln!("seedfall: cannot write {}: {e}", path.display()),
    }
    (status, resolved)
}
