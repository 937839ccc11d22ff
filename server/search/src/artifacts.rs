//! Failure folders: everything needed to replay and understand a failure.
//!
//! `.seedfall/failures/<config>-seed-<n>-<kind>-<hash>/` holds the schedule
//! (`faults.json`), the trace (`trace.jsonl`), each node instance's stdout and
//! stderr, and `summary.json`. A folder is written whole under a temporary
//! name and renamed into place, so a crash of seedfall never leaves half a
//! failure behind. `<hash>` is the failure's signature (node and message), so
//! the same failure of the same seed always lands in the same folder.
use seedfall_sim::trace::{EventKind, Stdio};
use crate::project::Project;
use seedfall_sim::{Config, Outcome, ScheduleFile};
use serde::Serialize;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Version 2: paths are relative to the config's folder (`paths`).
pub const SUMMARY_VERSION: u32 = 2;
/// Entries of a failures folder looked at when pruning it.
pub const FOLDERS_SCAN_MAX: usize = 1_000_000;

pub fn failures_dir(config: &Config) -> PathBuf {
    config.dir().join(".seedfall").join("failures")
}

/// The signature of a failure: which node (without replica number) and why.
/// The id of the failure's finding (`finding::Signature`): every seed that
/// fails the same way has folders with the same suffix.
pub fn signature(outcome: &Outcome) -> String {
    crate::finding::Signature::of(outcome.failure.as_ref().expect("a failing outcome")).id()
}

pub fn folder_name(config: &Config, outcome: &Outcome) -> String {
    let f = outcome.failure.as_ref().expect("a failing outcome");
    folder_name_for(config, outcome.seed, &crate::finding::Signature::of(f))
}

/// The folder name of seed `seed`'s failure with signature `s`.
pub fn folder_name_for(config: &Config, seed: u64, s: &crate::finding::Signature) -> String {
    format!("{}-seed-{seed}-{}-{}", config.name, crate::finding::kind_name(s.kind), s.id())
}

#[derive(Serialize)]
struct Summary<'a> {
    version: u32,
    config: &'a str,
    config_path: String,
    seed: u64,
    verdict: seedfall_sim::Verdict,
    end: seedfall_sim::outcome::EndReason,
    end_time_ns: u64,
    failure: &'a Option<seedfall_sim::failure::Failure>,
    properties: &'a std::collections::BTreeMap<String, seedfall_sim::props::PropertyRun>,
    stats: &'a seedfall_sim::Stats,
    trace_hash: String,
    trace_events_dropped: u64,
    /// The command that replays it, run from the config's folder.
    replay: String,
    /// The failure's source line, when the guest told where (the file
    /// relative to the config's folder): editors put the diagnostic there.
    source: Option<Source>,
    /// The file-system model it was found under, and whether it holds under the other.
    #[serde(skip_serializing_if = "Option::is_none")]
    model_check: &'a Option<seedfall_sim::outcome::ModelCheck>,
    /// Of the seeded disk contents the run had (`nodes[].disk`).
    seeds_digest: &'a str,
}

#[derive(Serialize, serde::Deserialize, Clone, Debug, PartialEq)]
pub struct Source {
    pub file: String,
    pub line: u32,
}

impl Source {
    /// The same place, as recorded in a file of this config.
    pub fn recorded(self, config: &Config) -> Source {
        Source { file: crate::paths::recorded(config, Path::new(&self.file)), line: self.line }
    }
}

/// A guest location (`module/path/file.go:12`, `src/main.rs:12`) resolved to
/// a file on this machine, when the node's recipe says where its sources are.
pub fn source(project: &Project, node: &str, raw: &str) -> Option<Source> {
    let line: u32 = raw.rsplit_once(':')?.1.parse().ok()?;
    let file = project.resolve_location(node, raw).or_else(|| {
        let f = std::path::Path::new(raw.rsplit_once(':')?.0);
        f.is_absolute().then(|| f.to_path_buf()).filter(|p| p.is_file())
    })?;
    Some(Source { file: file.display().to_string(), line })
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Writes the failure folder of a failing outcome (which must carry its trace).
pub fn write_failure(project: &Project, outcome: &Outcome) -> Result<PathBuf, String> {
    let config = &project.program.config;
    let root = failures_dir(config);
    let name = folder_name(config, outcome);
    let fin = root.join(&name);
    let tmp = root.join(format!(".tmp-{name}-{}-{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
    let io = |e: std::io::Error| format!("cannot write the failure folder {}: {e}", fin.display());
    std::fs::create_dir_all(&tmp).map_err(io)?;
    let faults = ScheduleFile::new(&config.name, &outcome.schedule, outcome.schedule.faults.as_deref().unwrap_or(&[]));
    write(&tmp.join("faults.json"), &serde_json::to_vec_pretty(&faults).unwrap()).map_err(io)?;
    let mut trace = Vec::new();
    for e in &outcome.trace {
        serde_json::to_writer(&mut trace, e).unwrap();
        trace.push(b'\n');
    }
    write(&tmp.join("trace.jsonl"), &trace).map_err(io)?;
    for (_, instance) in config.instances() {
        for (stream, ext) in [(Stdio::Stdout, "stdout"), (Stdio::Stderr, "stderr")] {
            let mut text = String::new();
            for e in &outcome.trace {
                if e.node.as_deref() != Some(instance.as_str()) {
                    continue;
                }
                match &e.kind {
                    EventKind::Output { stream: s, text: t } if *s == stream => {
                        text.push_str(t);
                        text.push('\n');
                    }
                    EventKind::OutputCapped { stream: s, cap_bytes, dropped_bytes, dropped_lines } if *s == stream => {
                        text.push_str(&capped_note(*cap_bytes, *dropped_bytes, *dropped_lines));
                    }
                    _ => {}
                }
            }
            write(&tmp.join(format!("{instance}.{ext}")), text.as_bytes()).map_err(io)?;
        }
    }
    let rel = |p: &Path| crate::paths::recorded(config, p);
    let summary = Summary {
        version: SUMMARY_VERSION,
        config: &config.name,
        config_path: rel(&config.path),
        seed: outcome.seed,
        verdict: outcome.verdict,
        end: outcome.end,
        end_time_ns: outcome.end_time.nanos(),
        failure: &outcome.failure,
        properties: &outcome.properties,
        stats: &outcome.stats,
        trace_hash: format!("{:016x}", outcome.trace_hash),
        trace_events_dropped: outcome.trace_events_dropped,
        replay: format!("seedfall replay -c {} -seed {} -faults {}", rel(&config.path), outcome.seed, rel(&fin.join("faults.json"))),
        source: outcome.failure.as_ref().and_then(|f| source(project, &f.node, f.location.as_deref()?)).map(|s| s.recorded(config)),
        model_check: &outcome.model_check,
        seeds_digest: &project.program.seeds_digest,
    };
    write(&tmp.join("summary.json"), &serde_json::to_vec_pretty(&summary).unwrap()).map_err(io)?;
    // Another seedfall may be writing the same failure (same seed, same
    // signature: the same bytes, since runs are deterministic); whichever
    // lands, the folder is complete. What the tools added to an existing
    // folder (shrink's faults.shrunk.json, cause's children) is carried
    // over: writing the folder again must not lose earlier work. The old
    // folder is never changed in place: the new one gets links to what it
    // lacks, then the two swap names in one step, so a kill at any point
    // leaves a whole folder under the final name (the old or the new) and
    // at most a hidden one beside it.
    kill_point("written");
    if fin.exists() {
        carry_over(&fin, &tmp);
        kill_point("carried");
        match exchange(&tmp, &fin) {
            Ok(()) => {
                kill_point("exchanged");
                let _ = std::fs::remove_dir_all(&tmp);
                return Ok(fin);
            }
            // Without an atomic swap (another kernel or file system): move
            // the old one aside first, so the final name is never half.
            Err(_) => {
                let old = root.join(format!(".old-{name}-{}-{}", std::process::id(), TMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
                if std::fs::rename(&fin, &old).is_ok() {
                    kill_point("set-aside");
                    let _ = std::fs::rename(&tmp, &fin);
                    let _ = std::fs::remove_dir_all(&old);
                }
            }
        }
    }
    if let Err(e) = std::fs::rename(&tmp, &fin) {
        let _ = std::fs::remove_dir_all(&tmp);
        if !fin.join("summary.json").is_file() {
            return Err(io(e));
        }
    }
    Ok(fin)
}

/// Swaps two folders' names in one step (Linux's `renameat2` with
/// `RENAME_EXCHANGE`).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let (a, b) = (std::ffi::CString::new(a.as_os_str().as_bytes())?, std::ffi::CString::new(b.as_os_str().as_bytes())?);
    // SAFETY: both are NUL-terminated paths that live through the call.
    let r = unsafe { libc::renameat2(libc::AT_FDCWD, a.as_ptr(), libc::AT_FDCWD, b.as_ptr(), libc::RENAME_EXCHANGE) };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A fault-injection hook for the kill-at-every-step test: with
/// `SEEDFALL_TEST_KILL_AT=<point>` in its environment, seedfall dies at
/// that point (of writing a failure folder, or of a sweep), as `kill -9`
/// would have it (no cleanup, no unwinding). Unset, it costs an
/// environment lookup each time.
pub fn kill_point(point: &str) {
    if std::env::var_os("SEEDFALL_TEST_KILL_AT").is_some_and(|p| p == point) {
        // SAFETY: raising SIGKILL on ourselves; nothing after it runs.
        unsafe {
            libc::raise(libc::SIGKILL);
        }
    }
}

/// Links every entry of the old folder that the new one lacks into it
/// (files by hard link, folders entry by entry), leaving the old folder as
/// it was. Bounded by the folders' listings; an entry that cannot be
/// linked is copied, and one that cannot be copied stays with the old one.
fn carry_over(old: &Path, new: &Path) {
    let Ok(entries) = std::fs::read_dir(old) else { return };
    for e in entries.flatten().take(FOLDER_ENTRIES_MAX) {
        let to = new.join(e.file_name());
        if to.exists() {
            continue;
        }
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            if std::fs::create_dir(&to).is_ok() {
                carry_over(&e.path(), &to);
            }
        } else if std::fs::hard_link(e.path(), &to).is_err() {
            let _ = std::fs::copy(e.path(), &to);
        }
    }
}

/// More entries than a failure folder ever holds (its files, faults.shrunk.json
/// and cause's children folder).
const FOLDER_ENTRIES_MAX: usize = 1024;

/// The last line of a stdout or stderr file whose stream passed its cap.
pub fn capped_note(cap: u64, dropped_bytes: u64, dropped_lines: u64) -> String {
    format!(
        "[seedfall: output past {} per stream is not kept (limits.output_mb, or -output-cap): {} more in {dropped_lines} lines were hashed, not kept]\n",
        seedfall_sim::memory::human(cap),
        seedfall_sim::memory::human(dropped_bytes)
    )
}

fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut f = std::fs::File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// The seed and finding id a failure folder's name holds
/// (`<config>-seed-<seed>-<kind>-<id>`, as `folder_name_for` writes it),
/// when it is one of `config`'s.
pub fn seed_and_finding<'a>(config: &Config, name: &'a str) -> Option<(u64, &'a str)> {
    let rest = name.strip_prefix(config.name.as_str())?.strip_prefix("-seed-")?;
    let (seed, tail) = rest.split_once('-')?;
    Some((seed.parse().ok()?, tail.rsplit('-').next()?))
}

/// The seeds that have a failure folder of `config` (at most
/// `FOLDERS_SCAN_MAX` folders are looked at).
pub fn seeds_with_folders(config: &Config) -> std::collections::BTreeSet<u64> {
    let Ok(entries) = std::fs::read_dir(failures_dir(config)) else { return Default::default() };
    entries.flatten().take(FOLDERS_SCAN_MAX).filter_map(|e| Some(seed_and_finding(config, &e.file_name().to_string_lossy())?.0)).collect()
}

/// After a rerun in which `seed` passed: its plain-seed failure folders are
/// stale (the bug is fixed, or moved), so they go. Folders whose schedule
/// has branches (from explore or cause) are not the seed's alone and stay.
pub fn clear_passing(config: &Config, seed: u64) {
    let prefix = format!("{}-seed-{seed}-", config.name);
    let Ok(entries) = std::fs::read_dir(failures_dir(config)) else { return };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with(&prefix) {
            continue;
        }
        let branched = seedfall_sim::files::read_text(&e.path().join("faults.json"), seedfall_sim::files::JSON_BYTES_MAX, "the schedule file")
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_none_or(|v| v["branches"].as_array().is_none_or(|b| !b.is_empty()) || !v["prefix"].is_null());
        if !branched {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// What [`prune`] did.
#[derive(Debug, Default)]
pub struct Pruned {
    /// Folders removed to get within the budget, in the order they went.
    pub removed: Vec<String>,
    /// What the folders held before.
    pub bytes_before: u64,
    /// Half-written or replaced folders of seedfall processes that are
    /// gone (killed).
    pub stale_tmp: usize,
}

fn folder_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |es| es.flatten().filter_map(|e| e.metadata().ok()).map(|m| m.len()).sum())
}

/// Keeps the failure folders of `config` within `budget` bytes. Folders of
/// a failure (signature) kept more than once go first, oldest first; then
/// the oldest of the rest. `keep` (the folder just written) always stays.
/// Half-written `.tmp-*` folders of processes that no longer run go too.
pub fn prune(config: &Config, budget: u64, keep: &Path) -> Pruned {
    let mut pruned = Pruned::default();
    let root = failures_dir(config);
    let Ok(entries) = std::fs::read_dir(&root) else { return pruned };
    // (modified, name, signature, bytes)
    let mut folders: Vec<(std::time::SystemTime, String, String, u64)> = Vec::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(rest) = name.strip_prefix(".tmp-").or_else(|| name.strip_prefix(".old-")) {
            // .tmp-<name>-<pid>-<counter> (a folder being written, or after
            // a swap the one it replaced), .old-<name>-<pid>-<counter> (one
            // set aside without a swap)
            let pid = rest.rsplitn(3, '-').nth(1).and_then(|p| p.parse::<u32>().ok());
            if pid.is_some_and(|p| p != std::process::id() && !crate::cache::process_alive(p)) && std::fs::remove_dir_all(e.path()).is_ok() {
                pruned.stale_tmp += 1;
            }
            continue;
        }
        if !e.path().join("summary.json").is_file() {
            continue;
        }
        let modified = e.metadata().and_then(|m| m.modified()).unwrap_or(std::time::UNIX_EPOCH);
        let signature = name.rsplit('-').next().unwrap_or("").to_string();
        folders.push((modified, name, signature, folder_bytes(&e.path())));
    }
    let mut total: u64 = folders.iter().map(|f| f.3).sum();
    pruned.bytes_before = total;
    if total <= budget {
        return pruned;
    }
    let mut per_signature: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for f in &folders {
        *per_signature.entry(f.2.clone()).or_default() += 1;
    }
    folders.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    let keep_name = keep.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    // First the extra copies of failures kept more than once, then anything:
    // oldest first both times.
    for repeats_only in [true, false] {
        for (_, name, signature, bytes) in &folders {
            if total <= budget {
                return pruned;
            }
            let count = per_signature[signature];
            if name == &keep_name || count == 0 || (repeats_only && count < 2) || pruned.removed.contains(name) {
                continue;
            }
            if std::fs::remove_dir_all(root.join(name)).is_ok() {
                total -= bytes;
                *per_signature.get_mut(signature).unwrap() -= 1;
                pruned.removed.push(name.clone());
            }
        }
    }
    pruned
}
