//! File watching: configs, failure folders, the last sweep's results, the
//! corpus, pinned regressions and guest sources, in every workspace root.
//! Events go through a bounded channel; when it overflows, the next refresh
//! rescans everything instead of losing a change.
use notify::{RecursiveMode, Watcher};
use std::path::PathBuf;
use tokio::sync::mpsc;

/// Bound on queued file events.
pub const EVENTS_QUEUED_MAX: usize = 4096;

pub enum Change {
    Paths(Vec<PathBuf>),
    /// Events were dropped: rescan everything.
    Overflow,
}

/// Starts watching; the watcher lives as long as the returned handle.
pub fn start(roots: &[PathBuf]) -> Result<(notify::RecommendedWatcher, mpsc::Receiver<Change>), String> {
    let (tx, rx) = mpsc::channel(EVENTS_QUEUED_MAX);
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        let change = match res {
            Ok(ev) => Change::Paths(ev.paths),
            Err(_) => Change::Overflow,
        };
        if tx.try_send(change).is_err() {
            let _ = tx.try_send(Change::Overflow);
        }
    })
    .map_err(|e| format!("cannot watch files: {e}"))?;
    for r in roots {
        watcher.watch(r, RecursiveMode::Recursive).map_err(|e| format!("cannot watch {}: {e}", r.display()))?;
    }
    Ok((watcher, rx))
}

/// Whether a changed path can change what the daemon shows.
pub fn relevant(p: &std::path::Path) -> bool {
    let s = p.to_string_lossy();
    if s.contains("/target/") || s.contains("/node_modules/") || s.contains("/.git/") || s.contains("/.seedfall/cache/") {
        return false;
    }
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    crate::state::is_config_name(&name)
        || s.contains("/.seedfall/failures/")
        || s.contains("/.seedfall/last-run/")
        || s.contains("/.seedfall/corpus/")
        || s.contains("/regressions/")
        || name.ends_with(".go")
        || name.ends_with(".rs")
}
