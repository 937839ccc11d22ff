//! What a sweep keeps on disk of its failures: per finding, the folders of
//! its few shortest failing runs, and one index naming every failing seed of
//! every finding (`.seedfall/failures-index.json`, beside the folders, so
//! that everything in `failures/` is a failure folder). A 500-seed sweep of one
//! bug writes three folders, not five hundred.
//!
//! A folder a tool has worked in (shrink's `faults.shrunk.json`, cause's
//! children) is never removed for being one too many: that is work.
use crate::artifacts::failures_dir;
use crate::cache::write_atomic;
use crate::finding::{Finding, Findings, Signature};
use seedfall_sim::config::Config;
use serde::Serialize;
use std::path::PathBuf;

pub const INDEX_VERSION: u32 = 1;
/// Folders kept per finding unless `-keep-failures` says otherwise.
pub const KEEP_DEFAULT: usize = 3;
pub const KEEP_MAX: usize = 1000;

/// The folder of one failing run of a finding (as `artifacts::folder_name`).
pub fn folder(config: &Config, seed: u64, s: &Signature) -> PathBuf {
    failures_dir(config).join(crate::artifacts::folder_name_for(config, seed, s))
}

fn holds_tool_work(dir: &std::path::Path) -> bool {
    if dir.join("faults.shrunk.json").exists() {
        return true;
    }
    std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| e.file_name().to_string_lossy().starts_with("cause-seed-"))
}

/// Removes a run's folder unless a tool has worked in it; says whether it went.
pub fn remove(config: &Config, seed: u64, s: &Signature) -> bool {
    let dir = folder(config, seed, s);
    if !dir.is_dir() || holds_tool_work(&dir) {
        return false;
    }
    std::fs::remove_dir_all(&dir).is_ok()
}

/// Removes every other folder of this sweep's findings (left by earlier
/// sweeps): only the shortest runs stay. Returns how many went.
pub fn prune(config: &Config, findings: &Findings) -> usize {
    let Ok(entries) = std::fs::read_dir(failures_dir(config)) else { return 0 };
    let prefix = format!("{}-seed-", config.name);
    let mut removed = 0;
    for e in entries.flatten().take(crate::artifacts::FOLDERS_SCAN_MAX) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else { continue };
        let Some((seed, tail)) = rest.split_once('-') else { continue };
        let Ok(seed) = seed.parse::<u64>() else { continue };
        let Some(id) = tail.rsplit('-').next() else { continue };
        let Some(finding) = findings.by_id.get(id) else { continue };
        if finding.shortest.iter().any(|r| r.seed == seed) || holds_tool_work(&e.path()) {
            continue;
        }
        if std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[derive(Serialize)]
struct Index<'a> {
    version: u32,
    config: &'a str,
    /// The seeds of the sweep this index describes.
    seeds: &'a str,
    runs: u64,
    failed: u64,
    findings: Vec<IndexEntry<'a>>,
}

#[derive(Serialize)]
struct IndexEntry<'a> {
    #[serde(flatten)]
    finding: &'a Finding,
    /// The folders kept, relative to the failures folder, shortest first.
    folders: Vec<String>,
}

/// Where the index of the last failing sweep is.
pub fn index_path(config: &Config) -> PathBuf {
    config.dir().join(".seedfall").join("failures-index.json")
}

/// Writes the index of a sweep's findings (atomically); returns its path.
pub fn write_index(config: &Config, seeds: &str, runs: u64, failed: u64, findings: &Findings) -> Result<PathBuf, String> {
    let entries = findings
        .ordered()
        .into_iter()
        .map(|f| IndexEntry {
            finding: f,
            folders: f.shortest.iter().map(|r| folder(config, r.seed, &f.signature)).filter(|p| p.is_dir()).filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned())).collect(),
        })
        .collect();
    let index = Index { version: INDEX_VERSION, config: &config.name, seeds, runs, failed, findings: entries };
    let path = index_path(config);
    write_atomic(&path, &serde_json::to_vec_pretty(&index).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}
