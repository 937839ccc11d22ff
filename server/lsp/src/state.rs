//! The daemon's one owner of workspace state: the configs it found and, for
//! each, what is on disk about it (parse errors, failure folders, the last
//! sweep's results, the corpus). Everything here is derived from files, so
//! the CLI in a terminal and the editor see the same thing; a refresh simply
//! reads them again.
use dashmap::DashMap;
use seedfall_sim::{Config, ConfigError};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

/// Bounds on what a scan reads.
pub const CONFIGS_MAX: usize = 256;
pub const FAILURES_MAX: usize = 500;
const SCAN_DEPTH_MAX: usize = 6;
const SKIP_DIRS: &[&str] = &[".git", ".seedfall", "target", "node_modules", "regressions"];

#[derive(Clone, Debug)]
pub struct FailureView {
    pub folder: PathBuf,
    pub seed: u64,
    pub node: String,
    pub message: String,
    pub details: Option<String>,
    pub kind: String,
    pub time_ns: u64,
    /// "found under ext4; holds on ext4, xfs and btrfs" (summary v2 on).
    pub durability: Option<String>,
    /// What seedfall thinks went wrong, when it can tell.
    pub hint: Option<String>,
    /// The failing source line (file resolved against the config's folder, 1-based line), when known.
    pub source: Option<(PathBuf, u32)>,
    /// The id of its finding (the folder name's last part).
    pub finding: String,
    /// How many seeds failed with this finding in the last sweep
    /// (`failures-index.json`), which keeps folders of only a few of them.
    pub finding_seeds: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct ConfigView {
    pub path: PathBuf,
    pub text: String,
    pub parsed: Result<Config, ConfigError>,
    pub failures: Vec<FailureView>,
    pub last_run: Option<Value>,
    pub corpus: Vec<Value>,
    pub stale_corpus: Vec<String>,
    /// The properties in the Go nodes' own sources, before any run
    /// (`catalog::from_go_sources`): what the Testing view lists first.
    pub catalog: Vec<Value>,
}

#[derive(Default)]
pub struct State {
    pub roots: RwLock<Vec<PathBuf>>,
    pub configs: DashMap<PathBuf, ConfigView>,
    /// Rounds of the explorations this daemon ran, per config.
    pub rounds: DashMap<PathBuf, Vec<Value>>,
    /// Editor buffers that differ from disk (config files being typed).
    pub open_texts: DashMap<PathBuf, String>,
    /// Configs whose Go sources changed since their catalog was scanned
    /// (at most one entry per known config). Noted as changes arrive, even
    /// for a config whose reread waits for its job to end, so that no
    /// source edit is lost while every other reread reuses the catalog.
    pub(crate) sources_changed: dashmap::DashSet<PathBuf>,
}

/// Files seedfall itself once wrote beside a config under a config-like
/// name: never configs.
const NOT_CONFIGS: &[&str] = &["seedfall-findings.json"];

/// A config is `seedfall.json` or `seedfall<sep><name>.json` (`seedfall.fixed.json`).
/// Nothing seedfall writes is named so (its outputs live under `.seedfall/`).
pub fn is_config_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("seedfall").and_then(|r| r.strip_suffix(".json")) else { return false };
    (rest.is_empty() || rest.starts_with(['.', '-', '_'])) && !NOT_CONFIGS.contains(&name)
}

/// Every seedfall config under the roots (bounded depth and count).
pub fn find_configs(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, usize)> = roots.iter().map(|r| (r.clone(), 0)).collect();
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name().to_string_lossy().into_owned();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() && depth < SCAN_DEPTH_MAX && !SKIP_DIRS.contains(&name.as_str()) {
                stack.push((e.path(), depth + 1));
            } else if ft.is_file() && is_config_name(&name) && out.len() < CONFIGS_MAX {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

impl ConfigView {
    /// A path from a record: relative to the config's folder (absolute in
    /// records written before version 2, which join leaves as it is).
    pub fn resolve(&self, recorded: &str) -> PathBuf {
        self.path.parent().unwrap_or(Path::new("/")).join(recorded)
    }
}

fn read_failures(config: &Config) -> Vec<FailureView> {
    let dir = seedfall_search::artifacts::failures_dir(config);
    let Ok(entries) = std::fs::read_dir(&dir) else { return Vec::new() };
    let prefix = format!("{}-seed-", config.name);
    let mut out = Vec::new();
    let counts = finding_counts(&seedfall_search::kept::index_path(config));
    let mut names: Vec<_> = entries.flatten().filter(|e| e.file_name().to_string_lossy().starts_with(&prefix)).collect();
    names.sort_by_key(|e| e.file_name());
    for e in names.into_iter().take(FAILURES_MAX) {
        let Ok(text) = seedfall_sim::files::read_text(&e.path().join("summary.json"), seedfall_sim::files::JSON_BYTES_MAX, "the failure's summary") else { continue };
        let Ok(v) = serde_json::from_str::<Value>(&text) else { continue };
        let f = &v["failure"];
        let source = v["source"]["file"].as_str().zip(v["source"]["line"].as_u64()).map(|(file, line)| (config.dir().join(file), line as u32));
        let name = e.file_name().to_string_lossy().into_owned();
        let finding = name.rsplit('-').next().unwrap_or("").to_string();
        out.push(FailureView {
            finding_seeds: counts.get(&finding).copied(),
            finding,
            folder: e.path(),
            seed: v["seed"].as_u64().unwrap_or(0),
            node: f["node"].as_str().unwrap_or("").to_string(),
            message: f["message"].as_str().unwrap_or("").to_string(),
            details: f["details"].as_str().map(str::to_string),
            kind: f["kind"].as_str().unwrap_or("").to_string(),
            time_ns: f["time_ns"].as_u64().unwrap_or(0),
            durability: v["model_check"]["label"].as_str().map(|l| format!("found under {}; {l}", v["model_check"]["found_under"].as_str().unwrap_or("?"))),
            hint: f["hint"].as_str().map(str::to_string),
            source,
        });
    }
    // Seed order, not name order (seed 2 before seed 14).
    out.sort_by_key(|f| f.seed);
    out
}

/// Whether a changed file is one the config's source catalog is read from.
fn catalog_depends_on(config: &Config, changed: &Path) -> bool {
    config.nodes.iter().any(|n| match &n.source {
        seedfall_sim::config::WasmSource::Go { dir, package, .. } => seedfall_search::catalog::go_sources_depend_on(dir, package, changed),
        seedfall_sim::config::WasmSource::Cargo { dir, .. } => seedfall_search::catalog::rust_sources_depend_on(dir, changed),
        seedfall_sim::config::WasmSource::Path(_) => false,
    })
}

/// The properties found in the sources of the config's Go and Rust nodes,
/// each with its source (file absolute, line 1-based).
fn source_catalog(config: &Config) -> Vec<Value> {
    let mut out = Vec::new();
    for n in &config.nodes {
        let c = match &n.source {
            seedfall_sim::config::WasmSource::Go { dir, package, .. } => seedfall_search::catalog::from_go_sources(&n.name, dir, package, config.dir()),
            seedfall_sim::config::WasmSource::Cargo { dir, .. } => seedfall_search::catalog::from_rust_sources(&n.name, dir, config.dir()),
            // A prebuilt module: its catalog is in it, known after a run.
            seedfall_sim::config::WasmSource::Path(_) => continue,
        };
        // `file:line` relative to the config's folder, as a source a client opens.
        out.extend(c.entries.iter().map(|e| {
            let (file, line) = e.location.rsplit_once(':').map(|(f, l)| (f, l.parse::<u64>().unwrap_or(1))).unwrap_or((e.location.as_str(), 1));
            serde_json::json!({ "node": e.node, "kind": e.kind, "message": e.message, "source": { "file": config.dir().join(file), "line": line } })
        }));
    }
    out
}

/// Failing seeds per finding id, from the last sweep's index (skipped when
/// missing or unreadable: the folders alone are then counted). Only the
/// ids and counts are read; the seed lists, most of the file, are skipped.
fn finding_counts(path: &Path) -> std::collections::HashMap<String, u64> {
    #[derive(serde::Deserialize)]
    struct Index {
        findings: Vec<Counted>,
    }
    #[derive(serde::Deserialize)]
    struct Counted {
        id: String,
        count: u64,
    }
    let Ok(text) = seedfall_sim::files::read_text(path, seedfall_search::kept::INDEX_BYTES_MAX, "the failures index") else { return Default::default() };
    let Ok(index) = serde_json::from_str::<Index>(&text) else { return Default::default() };
    index.findings.into_iter().map(|f| (f.id, f.count)).collect()
}

impl State {
    /// Notes changed files: a config whose Go sources include one of them
    /// scans its sources again at its next reread (`refresh_config`).
    pub fn note_changed<'a>(&self, paths: impl IntoIterator<Item = &'a PathBuf>) {
        let sources: Vec<&PathBuf> = paths.into_iter().filter(|p| p.extension().is_some_and(|x| x == "go") || p.ends_with("go.mod")).collect();
        if sources.is_empty() {
            return;
        }
        for c in self.configs.iter() {
            if c.parsed.as_ref().is_ok_and(|config| sources.iter().any(|p| catalog_depends_on(config, p))) {
                self.sources_changed.insert(c.key().clone());
            }
        }
    }

    /// Changes may have been missed (the watcher overflowed, or had not
    /// started yet): every config scans its sources at its next reread.
    pub fn note_all_changed(&self) {
        for c in self.configs.iter() {
            self.sources_changed.insert(c.key().clone());
        }
    }

    /// The catalog of the config's sources: the previous one while neither
    /// the config's text nor a source it is read from changed since (the
    /// daemon's own outputs under `.seedfall/` reread a config often), else
    /// a new scan.
    fn catalog_for(&self, path: &Path, text: &str, parsed: &Result<Config, ConfigError>) -> Vec<Value> {
        let sources_changed = self.sources_changed.remove(path).is_some();
        let kept = self.configs.get(path).filter(|c| !sources_changed && c.text == text).map(|c| c.catalog.clone());
        kept.unwrap_or_else(|| parsed.as_ref().map(source_catalog).unwrap_or_default())
    }

    /// Reads one config and everything on disk about it; its sources'
    /// catalog only when `catalog_for` says it may have changed.
    pub fn refresh_config(&self, path: &Path) {
        if !path.is_file() {
            self.configs.remove(path);
            self.sources_changed.remove(path);
            return;
        }
        let text = match self.open_texts.get(path) {
            Some(t) => t.clone(),
            None => seedfall_sim::files::read_text(path, seedfall_sim::files::JSON_BYTES_MAX, "the config").unwrap_or_default(),
        };
        let parsed = Config::parse(path, &text);
        let catalog = self.catalog_for(path, &text, &parsed);
        let (failures, last_run, corpus, stale) = match &parsed {
            Ok(config) => {
                let last_run = seedfall_sim::files::read_text(&seedfall_search::properties::last_run_path(config), seedfall_sim::files::JSON_BYTES_MAX, "the last run").ok().and_then(|t| serde_json::from_str(&t).ok());
                let (entries, stale) = seedfall_search::explore::corpus::load(&seedfall_search::explore::corpus::default_dir(config), config);
                let corpus = entries.iter().map(|e| serde_json::to_value(e).unwrap()).collect();
                (read_failures(config), last_run, corpus, stale)
            }
            Err(_) => (Vec::new(), None, Vec::new(), Vec::new()),
        };
        self.configs.insert(path.to_path_buf(), ConfigView { path: path.to_path_buf(), text, parsed, failures, last_run, corpus, stale_corpus: stale, catalog });
    }

    /// Rescans the roots for configs and refreshes all of them.
    pub fn refresh_all(&self) {
        let roots = self.roots.read().unwrap().clone();
        let found = find_configs(&roots);
        let known: Vec<PathBuf> = self.configs.iter().map(|c| c.key().clone()).collect();
        for k in known {
            if !found.contains(&k) {
                self.configs.remove(&k);
                self.sources_changed.remove(&k);
            }
        }
        for p in found {
            self.refresh_config(&p);
        }
    }

    /// The config a changed file belongs to (or None when it concerns none).
    pub fn owner_of(&self, changed: &Path) -> Vec<PathBuf> {
        self.configs.iter().filter(|c| changed.starts_with(c.key().parent().unwrap_or(Path::new("/")))).map(|c| c.key().clone()).collect()
    }

    pub fn within_roots(&self, p: &Path) -> bool {
        self.roots.read().unwrap().iter().any(|r| p.starts_with(r))
    }
}

#[cfg(test)]
mod tests {
    use super::is_config_name;

    #[test]
    fn configs_by_name_and_never_our_outputs() {
        for yes in ["seedfall.json", "seedfall.fixed.json", "seedfall-ci.json", "seedfall_x.json"] {
            assert!(is_config_name(yes), "{yes}");
        }
        for no in ["seedfall-findings.json", "seedfallish.json", "seedfall.jsonc", "my-seedfall.json", "seedfall"] {
            assert!(!is_config_name(no), "{no}");
        }
    }
}
