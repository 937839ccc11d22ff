//! File watching: configs, failure folders, the last sweep's results, the
//! corpus, pinned regressions and guest sources, in every workspace root.
//! Events go through a bounded channel; when it overflows, the next refresh
//! rescans everything instead of losing a change.
//!
//! Only events that can mean new content count. inotify also reports opens,
//! reads and closes without a write (`EventKind::Access`), and metadata
//! changes such as access times: forwarding those made every refresh (which
//! reads configs and sources) trigger the next one, for ever.
use notify::event::{AccessKind, AccessMode, ModifyKind};
use notify::{EventKind, RecursiveMode, Watcher};
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
            Ok(ev) if !changes_content(&ev.kind) => return,
            Ok(ev) if ev.need_rescan() => Change::Overflow,
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

/// Whether an event can mean that a file's content or a name changed.
pub fn changes_content(kind: &EventKind) -> bool {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(_)) => false,
        EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) | EventKind::Any | EventKind::Other => true,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{CreateKind, DataChange, MetadataKind, RenameMode};

    #[test]
    fn reads_and_metadata_are_not_changes() {
        assert!(!changes_content(&EventKind::Access(AccessKind::Open(AccessMode::Any))));
        assert!(!changes_content(&EventKind::Access(AccessKind::Read)));
        assert!(!changes_content(&EventKind::Access(AccessKind::Close(AccessMode::Read))));
        assert!(!changes_content(&EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))));
        assert!(changes_content(&EventKind::Access(AccessKind::Close(AccessMode::Write))));
        assert!(changes_content(&EventKind::Modify(ModifyKind::Data(DataChange::Any))));
        assert!(changes_content(&EventKind::Modify(ModifyKind::Name(RenameMode::Both))));
        assert!(changes_content(&EventKind::Create(CreateKind::Folder)));
    }

    /// The real watcher on a real folder: reading a file says nothing, writing it does.
    #[tokio::test]
    async fn a_read_is_silent_and_a_write_is_heard() {
        let dir = std::env::temp_dir().join(format!("seedfall-watch-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("seedfall.json");
        std::fs::write(&file, "{}").unwrap();
        let (_w, mut rx) = start(&[dir.clone()]).unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        for _ in 0..20 {
            std::fs::read_to_string(&file).unwrap();
        }
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(rx.try_recv().is_err(), "reads produced events");
        std::fs::write(&file, "{ }").unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), rx.recv()).await.expect("a write is heard");
        assert!(matches!(got, Some(Change::Paths(p)) if p.contains(&file)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
