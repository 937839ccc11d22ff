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
use crate::cache::write_atomic_with;
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
pub fn prune(config: &Config, findings: &Findings, started: std::time::SystemTime, keep: &BTreeSet<String>, spare: &dyn Fn(u64, &str) -> bool) -> usize {
    let Ok(entries) = std::fs::read_dir(failures_dir(config)) else { return 0 };
    let claimed = Claim::held_by_others(config);
    let mut removed = 0;
    for e in entries.flatten().take(crate::artifacts::FOLDERS_SCAN_MAX) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((seed, id)) = crate::artifacts::seed_and_finding(config, &name) else { continue };
        let Some(finding) = findings.by_id.get(id) else { continue };
        if finding.shortest.iter().any(|r| r.seed == seed) || holds_tool_work(&e.path()) || keep.contains(&name) || claimed.contains(&name) || spare(seed, &name) {
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
///
/// `spare(seed, folder)` names folders the caller removes itself once this
/// returns (a seed that passes now, a run a shorter one displaced): they
/// are not pruned, so not counted as pruned, and they outlive the index
/// that no longer names them, never the other way round.
pub fn settle(
    config: &Config,
    seeds: &str,
    runs: u64,
    failed: u64,
    findings: &Findings,
    started: std::time::SystemTime,
    spare: &dyn Fn(u64, &str) -> bool,
) -> usize {
    let named = match write_index(config, seeds, runs, failed, findings) {
        Ok((_, named)) => named,
        Err(e) => {
            // Without the index's word, prune nothing it might name.
            eprintln!("seedfall: {e}");
            return 0;
        }
    };
    prune(config, findings, started, &named, spare)
}

/// Bound on the claim files read (one per running sweep of a workspace).
pub const CLAIMS_MAX: usize = 4096;
/// Bound on one claim file.
pub const CLAIM_BYTES_MAX: u64 = 1 << 20;

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
            if !crate::cache::process_alive(pid) {
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
pub const INDEX_BYTES_MAX: u64 = 256 << 20;

/// One seed range a sweep ran, as the index keeps it.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
struct Range {
    seeds: String,
    runs: u64,
    failed: u64,
}

fn parse_range(text: &str) -> Option<crate::SeedRange> {
    crate::SeedRange::parse(text).ok()
}

fn overlap(a: &str, b: &str) -> bool {
    match (parse_range(a), parse_range(b)) {
        (Some(a), Some(b)) => a.first <= b.last && b.first <= a.last,
        _ => true, // unreadable: replaced, as the single index once was
    }
}

fn in_range(seed: u64, range: &str) -> bool {
    parse_range(range).is_some_and(|r| r.contains(seed))
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
    lock.lock()
        .map_err(|e| format!("cannot lock {}: {e}", lock_path.display()))?;
    // Read typed, not as a tree of values: its seed lists are most of it,
    // 8 bytes a seed here and up to 32 there.
    let old: Option<IndexFile> =
        seedfall_sim::files::read_text(&path, INDEX_BYTES_MAX, "the failures index")
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .filter(|v: &IndexFile| v.version == INDEX_VERSION);
    // The ranges of the old index that this sweep leaves standing.
    let (old_ranges, old_entries) = match old {
        Some(v) => (
            v.ranges.unwrap_or_else(|| {
                vec![Range {
                    seeds: v.seeds,
                    runs: v.runs,
                    failed: v.failed,
                }]
            }),
            v.findings,
        ),
        None => (Vec::new(), Vec::new()),
    };
    let kept: Vec<Range> = old_ranges
        .into_iter()
        .filter(|r| !overlap(&r.seeds, seeds))
        .collect();
    let kept_seed = |seed: u64| kept.iter().any(|r| in_range(seed, &r.seeds));
    // In this sweep's order, then the old index's: (id -> place) beside.
    let mut entries: Vec<IndexEntry> = Vec::new();
    let mut place: BTreeMap<String, usize> = BTreeMap::new();
    for f in findings.ordered() {
        let folders: Vec<String> = f
            .shortest
            .iter()
            .map(|r| folder(config, r.seed, &f.signature))
            .filter(|p| p.is_dir())
            .filter_map(|p| Some(p.file_name()?.to_string_lossy().into_owned()))
            .collect();
        place.insert(f.id.clone(), entries.len());
        entries.push(IndexEntry {
            id: f.id.clone(),
            title: f.title.clone(),
            signature: serde_json::to_value(&f.signature).expect("a signature serialises"),
            count: f.count,
            seeds: f.seeds.clone(),
            shortest: f
                .shortest
                .iter()
                .map(|r| serde_json::to_value(r).expect("a run serialises"))
                .collect(),
            examples: f
                .examples
                .iter()
                .map(|r| serde_json::to_value(r).expect("a run serialises"))
                .collect(),
            folders,
        });
    }
    // What the old index said of the ranges that stay.
    for old_entry in old_entries {
        let seeds: Vec<u64> = old_entry
            .seeds
            .iter()
            .copied()
            .filter(|s| kept_seed(*s))
            .collect();
        if seeds.is_empty() {
            continue;
        }
        let runs_of = |list: &[serde_json::Value]| -> Vec<serde_json::Value> {
            list.iter()
                .filter(|r| r["seed"].as_u64().is_some_and(&kept_seed))
                .cloned()
                .collect()
        };
        let folders: Vec<String> = old_entry
            .folders
            .iter()
            .filter(|f| failures_dir(config).join(f).is_dir())
            .cloned()
            .collect();
        let (shortest, examples) = (runs_of(&old_entry.shortest), runs_of(&old_entry.examples));
        let at = *place.entry(old_entry.id.clone()).or_insert_with(|| {
            entries.push(IndexEntry {
                count: 0,
                seeds: Vec::new(),
                shortest: Vec::new(),
                examples: Vec::new(),
                folders: Vec::new(),
                ..old_entry
            });
            entries.len() - 1
        });
        let e = &mut entries[at];
        e.seeds.extend(seeds);
        e.shortest.extend(shortest);
        e.examples.extend(examples);
        e.folders.extend(folders);
        e.count = e.seeds.len() as u64;
        // Shortest first, as one sweep would have listed them.
        e.shortest.sort_by_key(|r| {
            (
                r["time_ns"].as_u64(),
                r["steps"].as_u64(),
                r["seed"].as_u64(),
            )
        });
    }
    let mut ranges = kept;
    ranges.push(Range { seeds: seeds.to_string(), runs, failed });
    ranges.sort_by_key(|r| parse_range(&r.seeds).map(|r| (r.first, r.last)));
    if entries.is_empty() {
        let _ = std::fs::remove_file(&path);
        return Ok((path, BTreeSet::new()));
    }
    let named: BTreeSet<String> = entries
        .iter()
        .flat_map(|e| e.folders.iter().cloned())
        .collect();
    let index = IndexFile {
        version: INDEX_VERSION,
        config: config.name.clone(),
        seeds: ranges
            .iter()
            .map(|r| r.seeds.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        runs: ranges.iter().map(|r| r.runs).sum::<u64>(),
        failed: ranges.iter().map(|r| r.failed).sum::<u64>(),
        ranges: Some(ranges),
        findings: entries,
    };
    // Written as it is serialized: an index may hold millions of seeds.
    let mut write = |w: &mut dyn std::io::Write| -> std::io::Result<()> {
        let mut w = std::io::BufWriter::new(w);
        serde_json::to_writer_pretty(&mut w, &index)?;
        std::io::Write::flush(&mut w)
    };
    write_atomic_with(&path, &mut write).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok((path, named))
}

/// `.seedfall/failures-index.json` (docs/failures.md).
#[derive(Serialize, serde::Deserialize)]
struct IndexFile {
    version: u32,
    config: String,
    seeds: String,
    runs: u64,
    failed: u64,
    /// Absent from an index written before sweeps merged range by range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ranges: Option<Vec<Range>>,
    findings: Vec<IndexEntry>,
}

/// One finding of the index: a [`Finding`] and its folders. Its few runs
/// and its signature stay JSON values: the index only carries them on.
#[derive(Serialize, serde::Deserialize)]
struct IndexEntry {
    id: String,
    title: String,
    signature: serde_json::Value,
    count: u64,
    seeds: Vec<u64>,
    #[serde(default)]
    shortest: Vec<serde_json::Value>,
    #[serde(default)]
    examples: Vec<serde_json::Value>,
    #[serde(default)]
    folders: Vec<String>,
}
