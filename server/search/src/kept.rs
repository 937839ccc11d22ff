//! What a sweep keeps on disk of its failures: per finding, the folders of
//! its few shortest failing runs, and one index naming every failing seed of
//! every finding (`.seedfall/failures-index.json`, beside the folders, so
//! that everything in `failures/` is a failure folder). A 500-seed sweep of one
//! bug writes three folders, not five hundred.
//!
//! A folder a tool has worked in (shrink's `faults.shrunk.json`, cause's
//! children) is never removed for being one too many: that is work.
//!
//! Any number of seedfall processes may sweep one config at once (docs/
//! failures.md#several-at-once). Each holds a `Claim` on the folders it
//! writes while it runs; the index is merged under a lock, range by range
//! (a sweep replaces what the index said of every seed range it overlaps
//! and keeps the others); and a sweep prunes only folders that were there
//! before it started, that no running sweep claims and that the merged
//! index does not name. So nothing a sweep printed as saved goes until a
//! later sweep of the same seeds replaces it.
use crate::artifacts::failures_dir;
use crate::cache::write_atomic;
use crate::finding::{Findings, Signature};
use seedfall_sim::config::Config;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
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
/// sweeps): only the shortest runs stay. A folder written after `started`
/// (by a sweep that ran beside this one), claimed by a running sweep, or
/// named by the index (`keep`) stays too. Returns how many went.
pub fn prune(config: &Config, findings: &Findings, started: std::time::SystemTime, keep: &BTreeSet<String>) -> usize {
    let Ok(entries) = std::fs::read_dir(failures_dir(config)) else { return 0 };
    let prefix = format!("{}-seed-", config.name);
    let claimed = Claim::held_by_others(config);
    let mut removed = 0;
    for e in entries.flatten().take(crate::artifacts::FOLDERS_SCAN_MAX) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(&prefix) else { continue };
        let Some((seed, tail)) = rest.split_once('-') else { continue };
        let Ok(seed) = seed.parse::<u64>() else { continue };
        let Some(id) = tail.rsplit('-').next() else { continue };
        let Some(finding) = findings.by_id.get(id) else { continue };
        if finding.shortest.iter().any(|r| r.seed == seed) || holds_tool_work(&e.path()) || keep.contains(&name) || claimed.contains(&name) {
            continue;
        }
        let newer = e.metadata().and_then(|m| m.modified()).is_ok_and(|m| m >= started);
        if newer {
            continue;
        }
        if std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// What a whole sweep (or a merge of its shards) does with its findings at
/// its end: merges them into the index, then prunes the folders of its
/// findings that are neither its shortest runs, nor newer than `started`,
/// nor claimed, nor named by the index. Returns how many folders went.
pub fn settle(config: &Config, seeds: &str, runs: u64, failed: u64, findings: &Findings, started: std::time::SystemTime) -> usize {
    let named = match write_index(config, seeds, runs, failed, findings) {
        Ok((_, named)) => named,
        Err(e) => {
            // Without the index's word, prune nothing it might name.
            eprintln!("seedfall: {e}");
            return 0;
        }
    };
    prune(config, findings, started, &named)
}

/// Bound on the claim files read (one per running sweep of a workspace).
const CLAIMS_MAX: usize = 4096;
/// Bound on one claim file.
const CLAIM_BYTES_MAX: u64 = 1 << 20;

/// A running sweep's claim on the failure folders it writes: one file in
/// `.seedfall/live/` naming them, gone when the sweep ends. A claim whose
/// process is gone (killed) claims nothing and is cleared by the next look.
pub struct Claim {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Claim {
    fn dir(config: &Config) -> PathBuf {
        config.dir().join(".seedfall").join("live")
    }

    /// A claim for this process (a sweep that cannot write one is not
    /// protected from others, and says so).
    pub fn new(config: &Config) -> Claim {
        let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let path = Claim::dir(config).join(format!("{}-{}-{n}.claim", config.name, std::process::id()));
        let file = std::fs::create_dir_all(Claim::dir(config)).and_then(|_| std::fs::File::create(&path));
        if let Err(e) = &file {
            eprintln!("seedfall: cannot write {}: {e}; another sweep of this config may prune the folders this one keeps", path.display());
        }
        Claim { path, file: file.ok() }
    }

    /// Claims a folder this sweep wrote.
    pub fn add(&mut self, folder: &std::path::Path) {
        use std::io::Write;
        if let (Some(f), Some(name)) = (&mut self.file, folder.file_name()) {
            let _ = writeln!(f, "{}", name.to_string_lossy());
        }
    }

    /// The folders other running sweeps claim.
    pub fn held_by_others(config: &Config) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let Ok(entries) = std::fs::read_dir(Claim::dir(config)) else { return out };
        for e in entries.flatten().take(CLAIMS_MAX) {
            let name = e.file_name().to_string_lossy().into_owned();
            // <config>-<pid>-<nanos>.claim
            let pid = name.strip_suffix(".claim").and_then(|n| n.rsplitn(3, '-').nth(1)).and_then(|p| p.parse::<u32>().ok());
            let Some(pid) = pid else { continue };
            if pid == std::process::id() {
                continue;
            }
            if !crate::artifacts::process_alive(pid) {
                let _ = std::fs::remove_file(e.path());
                continue;
            }
            if let Ok(text) = seedfall_sim::files::read_text(&e.path(), CLAIM_BYTES_MAX, "a sweep's claim") {
                out.extend(text.lines().map(str::to_string));
            }
        }
        out
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.file = None;
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Where the index of the failing sweeps is.
pub fn index_path(config: &Config) -> PathBuf {
    config.dir().join(".seedfall").join("failures-index.json")
}

/// Bound on the index read back for a merge.
const INDEX_BYTES_MAX: u64 = 256 << 20;

/// One seed range a sweep ran, as the index keeps it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
struct Range {
    seeds: String,
    runs: u64,
    failed: u64,
}

fn parse_range(text: &str) -> Option<(u64, u64)> {
    let (a, b) = text.split_once('-').unwrap_or((text, text));
    let (a, b) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
    (a <= b).then_some((a, b))
}

fn overlap(a: &str, b: &str) -> bool {
    match (parse_range(a), parse_range(b)) {
        (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
        _ => true, // unreadable: replaced, as the single index once was
    }
}

fn in_range(seed: u64, range: &str) -> bool {
    parse_range(range).is_some_and(|(a, b)| a <= seed && seed <= b)
}

/// Merges this sweep's findings into the index under a lock (atomically
/// written); returns its path and the folders it names. The index keeps,
/// per seed range a sweep ran, what that sweep found: this sweep's range
/// replaces every range it overlaps, the others stay with their seeds and
/// folders (those still there). With nothing failing anywhere, there is no
/// index.
pub fn write_index(config: &Config, seeds: &str, runs: u64, failed: u64, findings: &Findings) -> Result<(PathBuf, BTreeSet<String>), String> {
    let path = index_path(config);
    let lock_path = path.with_extension("lock");
    let lock = std::fs::create_dir_all(path.parent().expect("in .seedfall")).and_then(|_| std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&lock_path));
    let lock = lock.map_err(|e| format!("cannot open {}: {e}", lock_path.display()))?;
    // Held until this function returns (the file closes): one merger at a time.
    lock.lock().map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    let old: Option<serde_json::Value> = seedfall_sim::files::read_text(&path, INDEX_BYTES_MAX, "the failures index").ok().and_then(|t| serde_json::from_str(&t).ok()).filter(|v: &serde_json::Value| v["version"] == INDEX_VERSION);
    // The ranges of the old index that this sweep leaves standing.
    let old_ranges: Vec<Range> = old.as_ref().map_or_else(Vec::new, |v| match v.get("ranges").and_then(|r| serde_json::from_value::<Vec<Range>>(r.clone()).ok()) {
        Some(r) => r,
        None => vec![Range { seeds: v["seeds"].as_str().unwrap_or("").to_string(), runs: v["runs"].as_u64().unwrap_or(0), failed: v["failed"].as_u64().unwrap_or(0) }],
    });
    let kept: Vec<Range> = old_ranges.into_iter().filter(|r| !overlap(&r.seeds, seeds)).collect();
    let kept_seed = |seed: u64| kept.iter().any(|r| in_range(seed, &r.seeds));
    // In this sweep's order, then the old index's: (id -> place) beside.
    let mut entries: Vec<serde_json::Value> = Vec::new();
    let mut place: BTreeMap<String, usize> = BTreeMap::new();
    for f in findings.ordered() {
        let folders: Vec<String> = f.shortest.iter().map(|r| folder(config, r.seed, &f.signature)).filter(|p| p.is_dir()).filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned())).collect();
        let mut v = serde_json::to_value(f).expect("a finding serialises");
        v["folders"] = serde_json::json!(folders);
        place.insert(f.id.clone(), entries.len());
        entries.push(v);
    }
    // What the old index said of the ranges that stay.
    for old_entry in old.as_ref().and_then(|v| v["findings"].as_array()).into_iter().flatten() {
        let Some(id) = old_entry["id"].as_str() else { continue };
        let seeds: Vec<u64> = old_entry["seeds"].as_array().into_iter().flatten().filter_map(serde_json::Value::as_u64).filter(|s| kept_seed(*s)).collect();
        if seeds.is_empty() {
            continue;
        }
        let runs_of = |key: &str| -> Vec<serde_json::Value> { old_entry[key].as_array().into_iter().flatten().filter(|r| r["seed"].as_u64().is_some_and(&kept_seed)).cloned().collect() };
        let folders: Vec<String> = old_entry["folders"].as_array().into_iter().flatten().filter_map(|f| f.as_str()).filter(|f| failures_dir(config).join(f).is_dir()).map(str::to_string).collect();
        let at = *place.entry(id.to_string()).or_insert_with(|| {
            let mut fresh = old_entry.clone();
            for key in ["seeds", "shortest", "examples", "folders"] {
                fresh[key] = serde_json::json!([]);
            }
            fresh["count"] = serde_json::json!(0);
            entries.push(fresh);
            entries.len() - 1
        });
        let e = &mut entries[at];
        let add = |e: &mut serde_json::Value, key: &str, more: Vec<serde_json::Value>| {
            if let Some(list) = e[key].as_array_mut() {
                list.extend(more);
            }
        };
        add(e, "seeds", seeds.iter().map(|s| serde_json::json!(s)).collect());
        add(e, "shortest", runs_of("shortest"));
        add(e, "examples", runs_of("examples"));
        add(e, "folders", folders.into_iter().map(serde_json::Value::from).collect());
        e["count"] = serde_json::json!(e["seeds"].as_array().map_or(0, Vec::len));
        // Shortest first, as one sweep would have listed them.
        if let Some(list) = e["shortest"].as_array_mut() {
            list.sort_by_key(|r| (r["time_ns"].as_u64(), r["steps"].as_u64(), r["seed"].as_u64()));
        }
    }
    let mut ranges = kept;
    ranges.push(Range { seeds: seeds.to_string(), runs, failed });
    ranges.sort_by_key(|r| parse_range(&r.seeds));
    if entries.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok((path, BTreeSet::new()));
    }
    let named: BTreeSet<String> = entries.iter().flat_map(|e| e["folders"].as_array().cloned().unwrap_or_default()).filter_map(|f| f.as_str().map(str::to_string)).collect();
    let index = serde_json::json!({
        "version": INDEX_VERSION,
        "config": config.name,
        "seeds": ranges.iter().map(|r| r.seeds.as_str()).collect::<Vec<_>>().join(", "),
        "runs": ranges.iter().map(|r| r.runs).sum::<u64>(),
        "failed": ranges.iter().map(|r| r.failed).sum::<u64>(),
        "ranges": ranges,
        "findings": entries,
    });
    write_atomic(&path, &serde_json::to_vec_pretty(&index).unwrap()).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, named))
}
