//! File-system models: when names, truncates and data become durable.
//!
//! - `posix`: the strict reading of POSIX. A file's data and size are
//!   durable after an fsync of that file; a name (create, mkdir, rename,
//!   unlink, rmdir) only after an fsync of its parent directory. Nothing
//!   else ever reaches the disk.
//! - `ext4`: ext4 with its default ordered journal (`data=ordered`,
//!   `auto_da_alloc`, `commit=5`). Metadata operations (create, mkdir,
//!   rename, unlink, rmdir, truncate) go into one journal in the order they
//!   were made; a commit makes all of them durable at once, so what survives
//!   a crash is the namespace as of the last commit. A commit happens at
//!   every successful fsync (of any file or directory) and every
//!   `commit_interval` (5 s). File data still needs its own fsync, with the
//!   two exceptions ext4 documents for delayed allocation (auto_da_alloc): a
//!   file renamed over an existing file, and a file truncated to zero and
//!   closed, have their data written out before the next commit.
//!
//! Both tear unsynced writes at sector granularity (`crash`). docs/disk.md
//! gives the rules with their sources.
use super::{Disk, Ino, Kind};
use crate::vtime::VTime;

/// ext4's default journal commit interval (`commit=5`).
pub const COMMIT_INTERVAL_DEFAULT_NS: u64 = 5_000_000_000;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsModel {
    /// Names durable only after the parent directory's fsync.
    Posix,
    /// An ordered metadata journal committed by any fsync.
    #[default]
    Ext4,
}

impl FsModel {
    pub fn name(self) -> &'static str {
        match self {
            FsModel::Posix => "posix",
            FsModel::Ext4 => "ext4",
        }
    }
    pub const ALL: [FsModel; 2] = [FsModel::Ext4, FsModel::Posix];

    pub fn parse(s: &str) -> Option<FsModel> {
        match s {
            "posix" => Some(FsModel::Posix),
            "ext4" => Some(FsModel::Ext4),
            _ => None,
        }
    }
    /// The model a failure is re-checked under.
    pub fn other(self) -> FsModel {
        match self {
            FsModel::Posix => FsModel::Ext4,
            FsModel::Ext4 => FsModel::Posix,
        }
    }
}

/// Weakened guarantees for `seedfall mutate`: does the workload notice?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// fsync of a file returns success and writes nothing (and, under ext4,
    /// commits nothing).
    FsyncNoop,
    /// posix: fsync of a directory returns success and makes no name durable.
    DirFsyncIgnored,
    /// O_SYNC / O_DSYNC writes stay in the cache like ordinary writes.
    OSyncIgnored,
    /// ext4: fsync writes the file's data but commits no journal: names and
    /// truncates become durable only at the periodic commit.
    JournalOnlyOnTimer,
    /// ext4: no auto_da_alloc: a replace-via-rename or replace-via-truncate
    /// does not write the new data out first.
    NoAutoDaAlloc,
}

impl Mutation {
    pub const ALL: [Mutation; 5] = [Mutation::FsyncNoop, Mutation::DirFsyncIgnored, Mutation::OSyncIgnored, Mutation::JournalOnlyOnTimer, Mutation::NoAutoDaAlloc];

    /// The mutations that weaken something `model` promises.
    pub fn for_model(model: FsModel) -> Vec<Mutation> {
        Mutation::ALL.into_iter().filter(|m| m.applies_to(model)).collect()
    }

    pub fn applies_to(self, model: FsModel) -> bool {
        match self {
            Mutation::FsyncNoop | Mutation::OSyncIgnored => true,
            Mutation::DirFsyncIgnored => model == FsModel::Posix,
            Mutation::JournalOnlyOnTimer | Mutation::NoAutoDaAlloc => model == FsModel::Ext4,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Mutation::FsyncNoop => "fsync is a no-op",
            Mutation::DirFsyncIgnored => "directory fsync is ignored",
            Mutation::OSyncIgnored => "O_SYNC/O_DSYNC is ignored",
            Mutation::JournalOnlyOnTimer => "fsync does not commit the journal",
            Mutation::NoAutoDaAlloc => "no auto_da_alloc on replace",
        }
    }
}

impl Disk {
    /// ext4: commits the journal: files flagged by auto_da_alloc write their
    /// data out first (ordered mode), then every metadata operation so far
    /// becomes durable at once.
    pub(super) fn commit(&mut self, now: VTime) {
        debug_assert_eq!(self.model, FsModel::Ext4, "only a journal commits");
        let sector = self.sector_bytes as usize;
        for inode in self.inodes.values_mut() {
            match &mut inode.kind {
                Kind::File(f) => {
                    if let Some(size) = f.pending_size.take() {
                        f.image.resize(&f.data, size, sector as u64, &Default::default());
                    }
                    if std::mem::take(&mut f.flush_on_commit) {
                        Disk::write_out(f, sector);
                    }
                    f.truncated_to_zero = false;
                }
                Kind::Dir { entries, durable_entries } => *durable_entries = entries.clone(),
            }
        }
        self.recount_all();
        self.note_orphans_may_go();
        self.last_commit = now;
    }

    /// ext4: the periodic commit, when its interval has passed. Called before
    /// each host call of the disk's node and before a crash, so every
    /// operation made before the commit moment is in it.
    pub fn tick(&mut self, now: VTime) {
        if self.model == FsModel::Ext4 && self.commit_interval_ns > 0 && now.nanos() >= self.last_commit.nanos().saturating_add(self.commit_interval_ns) {
            self.commit(now);
        }
    }

    /// The file was closed: ext4 writes a replace-via-truncate's data out
    /// before the next commit (auto_da_alloc).
    pub fn closed(&mut self, ino: Ino) {
        if self.model != FsModel::Ext4 || self.mutation == Some(Mutation::NoAutoDaAlloc) {
            return;
        }
        if let Ok(f) = self.file_mut(ino) {
            if f.truncated_to_zero && !f.dirty.is_empty() {
                f.flush_on_commit = true;
            }
        }
    }

    /// A file was renamed over an existing file: ext4 writes its data out
    /// before the commit that makes the rename durable (auto_da_alloc).
    pub(super) fn replaced_via_rename(&mut self, ino: Ino) {
        if self.model != FsModel::Ext4 || self.mutation == Some(Mutation::NoAutoDaAlloc) {
            return;
        }
        if let Ok(f) = self.file_mut(ino) {
            f.flush_on_commit = true;
        }
    }
}
