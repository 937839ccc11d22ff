//! The one task that changes what the daemon shows, and the inbox that feeds it.
//!
//! Handlers never refresh or publish themselves and never wait on the
//! client: they drop what happened into the `Inbox` (an edited config's
//! text, changed files, a job that started or ended) and return. The task
//! takes everything that arrived in a short quiet period as one batch,
//! rereads what the batch touches, and speaks only when something changed:
//! - `textDocument/publishDiagnostics` for a file only when that file's
//!   diagnostics differ from what was last published for it;
//! - `workspace/codeLens/refresh` only when some lens differs, only to a
//!   client that declared `workspace.codeLens.refreshSupport`, at most one
//!   in flight, and never awaited by the loop itself;
//! - `seedfall/failureFound` for each failure folder that is new;
//! - `seedfall/changed` when what the extension's trees show (configs,
//!   failures, last sweeps, corpus) differs, naming the configs concerned.
//!
//! Bounds: the inbox holds at most one text per open config and
//! `PATHS_PENDING_MAX` changed paths (beyond that it rescans everything);
//! a batch waits at most `BATCH_WAIT_MAX` for a quiet moment.
use crate::protocol::*;
use crate::state::State;
use crate::{diagnostics, lenses};
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{oneshot, Notify};
use tower_lsp_server::Client;

/// Changed paths held before the inbox gives up on them and rescans.
pub const PATHS_PENDING_MAX: usize = 4096;
/// A batch starts once nothing new arrived for this long...
const QUIET: Duration = Duration::from_millis(40);
/// ...or once it has waited this long, whichever comes first.
const BATCH_WAIT_MAX: Duration = Duration::from_millis(400);
/// How long an unanswered lens refresh blocks the next one.
const REFRESH_ANSWER_MAX: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Pending {
    /// The latest editor text of each config (None: closed, read the disk).
    texts: BTreeMap<PathBuf, Option<String>>,
    paths: BTreeSet<PathBuf>,
    configs: BTreeSet<PathBuf>,
    rescan: bool,
    /// Configs with a job of this daemon running: their files change all
    /// the time, and the job's end rereads them once.
    busy: BTreeMap<PathBuf, usize>,
    done: Vec<oneshot::Sender<()>>,
    arrived: u64,
}

#[derive(Default)]
pub struct Inbox {
    pending: Mutex<Pending>,
    wake: Notify,
}

impl Inbox {
    fn put(&self, f: impl FnOnce(&mut Pending)) {
        let mut p = self.pending.lock().unwrap();
        f(&mut p);
        p.arrived += 1;
        drop(p);
        self.wake.notify_one();
    }

    /// A config's editor text changed (or, with None, its editor closed).
    pub fn text(&self, config: PathBuf, text: Option<String>) {
        self.put(|p| {
            p.texts.insert(config, text);
        });
    }

    /// Files changed on disk.
    pub fn files(&self, paths: impl IntoIterator<Item = PathBuf>) {
        self.put(|p| {
            p.paths.extend(paths);
            if p.paths.len() > PATHS_PENDING_MAX {
                p.paths.clear();
                p.rescan = true;
            }
        });
    }

    /// Reread everything (file events were lost, or at start-up).
    pub fn rescan(&self) {
        self.put(|p| p.rescan = true);
    }

    pub fn job_started(&self, config: PathBuf) {
        self.put(|p| *p.busy.entry(config).or_default() += 1);
    }

    /// A job ended: reread its config; resolves once that is published.
    pub async fn job_ended(&self, config: PathBuf) {
        let (tx, rx) = oneshot::channel();
        self.put(|p| {
            if let Some(n) = p.busy.get_mut(&config) {
                *n -= 1;
                if *n == 0 {
                    p.busy.remove(&config);
                }
            }
            p.configs.insert(config);
            p.done.push(tx);
        });
        let _ = rx.await;
    }
}

/// What the client declared it can take.
#[derive(Clone, Copy, Default, Debug)]
pub struct ClientCaps {
    pub lens_refresh: bool,
    pub work_done_progress: bool,
}

impl ClientCaps {
    pub fn of(c: &ClientCapabilities) -> ClientCaps {
        ClientCaps {
            lens_refresh: c.workspace.as_ref().and_then(|w| w.code_lens.as_ref()).and_then(|l| l.refresh_support).unwrap_or(false),
            work_done_progress: c.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false),
        }
    }
}

/// Lenses per file, as last computed: `textDocument/codeLens` answers from here.
pub type LensCache = Arc<RwLock<BTreeMap<PathBuf, Vec<CodeLens>>>>;

#[derive(Default)]
struct RefreshFlight {
    in_flight: bool,
    again: bool,
}

/// Asks the client to refresh lenses without waiting for its answer; while
/// one request is unanswered, later ones fold into a single follow-up.
fn refresh_lenses(client: &Client, flight: &Arc<Mutex<RefreshFlight>>) {
    {
        let mut f = flight.lock().unwrap();
        if f.in_flight {
            f.again = true;
            return;
        }
        f.in_flight = true;
    }
    let (client, flight) = (client.clone(), flight.clone());
    tokio::spawn(async move {
        loop {
            let _ = tokio::time::timeout(REFRESH_ANSWER_MAX, client.code_lens_refresh()).await;
            let mut f = flight.lock().unwrap();
            if !f.again {
                f.in_flight = false;
                return;
            }
            f.again = false;
        }
    });
}

/// Runs the loop until the daemon ends. `state` holds the scan that
/// `initialize` made before answering: what was there then is no news, but
/// what changed since is, even within the first batch (a sweep started
/// right after `initialized` can end inside it).
pub async fn run(inbox: Arc<Inbox>, state: Arc<State>, client: Client, caps: ClientCaps, lens_cache: LensCache) {
    let mut published: BTreeMap<PathBuf, Vec<Diagnostic>> = BTreeMap::new();
    let flight = Arc::new(Mutex::new(RefreshFlight::default()));
    let mut shown: BTreeMap<PathBuf, u64> = tree_digests(&state);
    loop {
        inbox.wake.notified().await;
        // Wait for a quiet moment, so a burst becomes one batch.
        let start = tokio::time::Instant::now();
        loop {
            let seen = inbox.pending.lock().unwrap().arrived;
            tokio::time::sleep(QUIET).await;
            if inbox.pending.lock().unwrap().arrived == seen || start.elapsed() >= BATCH_WAIT_MAX {
                break;
            }
        }
        let (batch, busy) = {
            let mut p = inbox.pending.lock().unwrap();
            let busy: BTreeSet<PathBuf> = p.busy.keys().cloned().collect();
            let batch = Pending { texts: std::mem::take(&mut p.texts), paths: std::mem::take(&mut p.paths), configs: std::mem::take(&mut p.configs), rescan: std::mem::take(&mut p.rescan), done: std::mem::take(&mut p.done), ..Default::default() };
            (batch, busy)
        };
        let failures_before = failure_folders(&state);
        let s = state.clone();
        let texts = batch.texts;
        let (paths, configs, rescan) = (batch.paths, batch.configs, batch.rescan);
        let _ = tokio::task::spawn_blocking(move || reread(&s, Batch { texts, paths, configs, rescan }, &busy)).await;
        // New failure folders (those of the start-up scan are in `before`).
        let before = failures_before;
        for c in state.configs.iter() {
            for f in c.failures.iter().filter(|f| !before.contains(&f.folder)) {
                let v = json!({ "config": c.path, "seed": f.seed, "node": f.node, "message": f.message, "folder": f.folder,
                    "source": f.source.as_ref().map(|(p, l)| json!({ "file": p, "line": l })) });
                client.send_notification::<FailureFound>(v).await;
            }
        }
        let now_shown = tree_digests(&state);
        let changed: Vec<&PathBuf> = now_shown.keys().chain(shown.keys()).filter(|c| shown.get(*c) != now_shown.get(*c)).collect::<BTreeSet<_>>().into_iter().collect();
        if !changed.is_empty() {
            client.send_notification::<Changed>(json!({ "configs": changed })).await;
        }
        shown = now_shown;
        let s = state.clone();
        let Ok((now, lenses)) = tokio::task::spawn_blocking(move || (diagnostics::compute(&s), lenses::all(&s))).await else { continue };
        publish_changes(&client, &mut published, now).await;
        let changed = {
            let mut cache = lens_cache.write().unwrap();
            let changed = *cache != lenses;
            *cache = lenses;
            changed
        };
        if changed && caps.lens_refresh {
            refresh_lenses(&client, &flight);
        }
        for d in batch.done {
            let _ = d.send(());
        }
    }
}

/// What one batch brings to reread.
struct Batch {
    texts: BTreeMap<PathBuf, Option<String>>,
    paths: BTreeSet<PathBuf>,
    configs: BTreeSet<PathBuf>,
    rescan: bool,
}

/// Rereads what a batch touches (blocking: it reads files). The changed
/// paths go down to the state first, so that a config's sources are
/// scanned again only when one of them changed (even while a job holds off
/// that config's reread), not on every write under `.seedfall/`.
fn reread(s: &State, batch: Batch, busy: &BTreeSet<PathBuf>) {
    let Batch { texts, paths, configs, rescan } = batch;
    let mut touched: BTreeSet<PathBuf> = configs;
    for (config, text) in texts {
        match text {
            Some(t) => s.open_texts.insert(config.clone(), t),
            None => s.open_texts.remove(&config).map(|(_, t)| t),
        };
        touched.insert(config);
    }
    if rescan {
        s.note_all_changed();
    }
    s.note_changed(&paths);
    let config_file_changed = paths.iter().any(|p| p.file_name().is_some_and(|n| crate::state::is_config_name(&n.to_string_lossy())));
    if rescan || config_file_changed {
        s.refresh_all();
        return;
    }
    for p in &paths {
        touched.extend(s.owner_of(p).into_iter().filter(|c| !busy.contains(c)));
    }
    touched.iter().for_each(|c| s.refresh_config(c));
}

/// A digest per config of what the trees show of it.
fn tree_digests(state: &State) -> BTreeMap<PathBuf, u64> {
    use std::hash::{Hash, Hasher};
    state
        .configs
        .iter()
        .map(|c| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            c.parsed.as_ref().err().map(|e| e.message.clone()).hash(&mut h);
            for f in &c.failures {
                (&f.folder, f.seed, &f.message).hash(&mut h);
            }
            c.last_run.as_ref().map(|v| v.to_string()).hash(&mut h);
            serde_json::Value::Array(c.corpus.clone()).to_string().hash(&mut h);
            c.stale_corpus.hash(&mut h);
            // The sources' properties: the Testing view lists them.
            serde_json::Value::Array(c.catalog.clone()).to_string().hash(&mut h);
            (c.key().clone(), h.finish())
        })
        .collect()
}

fn failure_folders(state: &State) -> BTreeSet<PathBuf> {
    state.configs.iter().flat_map(|c| c.failures.iter().map(|f| f.folder.clone()).collect::<Vec<_>>()).collect()
}

/// Publishes each file whose diagnostics differ from what it last got; a
/// file that had some and has none now gets an empty list (that is how a
/// fixed failure disappears). A file never published and still empty gets
/// nothing.
async fn publish_changes(client: &Client, published: &mut BTreeMap<PathBuf, Vec<Diagnostic>>, mut now: BTreeMap<PathBuf, Vec<Diagnostic>>) {
    now.retain(|_, d| !d.is_empty());
    let files: BTreeSet<PathBuf> = published.keys().chain(now.keys()).cloned().collect();
    for f in files {
        let new = now.remove(&f).unwrap_or_default();
        if published.get(&f).map(Vec::as_slice).unwrap_or(&[]) == new.as_slice() {
            continue;
        }
        if let Some(u) = uri(&f) {
            client.publish_diagnostics(u, new.clone(), None).await;
        }
        if new.is_empty() {
            published.remove(&f);
        } else {
            published.insert(f, new);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A copy of examples/kvlog (its files only, not its `.seedfall/`).
    fn kvlog_copy(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("seedfall-refresh-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/kvlog");
        for e in std::fs::read_dir(&example).unwrap().flatten().filter(|e| e.path().is_file()) {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
        dir
    }

    fn changed(paths: &[PathBuf]) -> Batch {
        Batch { texts: BTreeMap::new(), paths: paths.iter().cloned().collect(), configs: BTreeSet::new(), rescan: false }
    }

    fn messages(s: &State, config: &Path) -> Vec<String> {
        s.configs.get(config).unwrap().catalog.iter().map(|e| e["message"].as_str().unwrap().to_string()).collect()
    }

    /// A new property in a new file of the node's folder, written without
    /// telling the daemon: only a rescan of the sources can find it.
    fn add_property(dir: &Path, message: &str) -> PathBuf {
        let file = dir.join("extra.go");
        std::fs::write(&file, format!("package main\n\nimport \"seedfall.dev/sdk/sim\"\n\nfunc extra() {{ sim.Sometimes(true, \"{message}\", nil) }}\n")).unwrap();
        file
    }

    #[test]
    fn the_daemons_own_outputs_do_not_rescan_sources_and_a_go_edit_does() {
        let dir = kvlog_copy("sources");
        let config = dir.join("seedfall.json");
        let s = State::default();
        *s.roots.write().unwrap() = vec![dir.clone()];
        reread(&s, Batch { rescan: true, ..changed(&[]) }, &BTreeSet::new());
        assert!(messages(&s, &config).contains(&"acknowledged writes survive crashes".to_string()), "{:?}", messages(&s, &config));

        // A sweep's output: the config is reread (its last run shows), its catalog kept.
        let extra = add_property(&dir, "added later");
        let last_run = seedfall_search::properties::last_run_path(s.configs.get(&config).unwrap().parsed.as_ref().unwrap());
        std::fs::create_dir_all(last_run.parent().unwrap()).unwrap();
        std::fs::write(&last_run, r#"{"properties": []}"#).unwrap();
        reread(&s, changed(&[last_run.clone(), dir.join(".seedfall/failures/kvlog-seed-1-x-y/summary.json")]), &BTreeSet::new());
        assert!(s.configs.get(&config).unwrap().last_run.is_some(), "the config was not reread");
        assert!(!messages(&s, &config).contains(&"added later".to_string()), "a write under .seedfall/ rescanned the sources");

        // The source edit itself: scanned.
        reread(&s, changed(&[extra.clone()]), &BTreeSet::new());
        assert!(messages(&s, &config).contains(&"added later".to_string()), "a .go edit did not rescan: {:?}", messages(&s, &config));

        // An edit while a job runs on the config: its reread waits for the
        // job's end, which must scan then, though the end names no path.
        add_property(&dir, "added during a job");
        let busy: BTreeSet<PathBuf> = [config.clone()].into();
        reread(&s, changed(&[extra.clone()]), &busy);
        assert!(!messages(&s, &config).contains(&"added during a job".to_string()), "a busy config was reread");
        reread(&s, Batch { configs: busy.clone(), ..changed(&[]) }, &BTreeSet::new());
        assert!(messages(&s, &config).contains(&"added during a job".to_string()), "the edit made during the job was lost");

        // The config's own text (an editor buffer): scanned.
        add_property(&dir, "added before a config edit");
        let text = std::fs::read_to_string(&config).unwrap();
        reread(&s, Batch { texts: [(config.clone(), Some(format!("{text} ")))].into(), ..changed(&[]) }, &BTreeSet::new());
        assert!(messages(&s, &config).contains(&"added before a config edit".to_string()));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Which files the catalog of a node hangs on.
    #[test]
    fn only_the_nodes_own_sources_count() {
        let dir = kvlog_copy("depends");
        let config = dir.join("seedfall.json");
        let s = State::default();
        *s.roots.write().unwrap() = vec![dir.clone()];
        s.refresh_all();
        for (path, counts) in [
            ("main.go", true),
            ("go.mod", true),
            ("README.md", false),
            (".seedfall/go-storage/x/y.go", false),
            (".seedfall/last-run/kvlog.json", false),
            ("sub/other.go", false),
        ] {
            s.note_changed(&[dir.join(path)]);
            assert_eq!(s.sources_changed.contains(&config), counts, "{path}");
            s.refresh_config(&config);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
