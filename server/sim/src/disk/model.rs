//! File-system models: when names, sizes and data become durable, and what
//! a crash may keep of what is not. Each rule below was measured on the real
//! kernel by the oracle (tests/oracle; docs/disk.md has the table):
//!
//! - `ext4` (`data=ordered`, `auto_da_alloc`, `commit=5`): metadata (names,
//!   truncates, sizes) goes into one journal in the order it was made; a
//!   commit (at every fsync, and every `commit_interval`) makes all of it
//!   durable at once. A file's size on disk is the one the journal committed:
//!   an append past it is invisible after a crash until a commit carries it,
//!   and an append that ends inside the file's last allocated 4 KiB block
//!   moves the committed size at once, so a commit of anything makes that
//!   length durable over bytes never written (zeros). auto_da_alloc writes
//!   the data of a file renamed over another, or truncated to zero and
//!   closed, before the next commit.
//! - `xfs`: one ordered log committed by every fsync (and every 30 s), as
//!   ext4, but a file's size on disk moves only when its data is written, so
//!   an unsynced append never shows as zeros, and a file renamed over another
//!   without an fsync is empty after a crash (no replace-via-rename flush).
//!   A file truncated to zero and closed is written out (`XFS_ITRUNCATED`).
//! - `btrfs` (copy on write, log tree): an fsync makes durable the file's
//!   data, size and its own names (and the folders leading to it), and
//!   nothing of other files; a folder's fsync makes its names durable. A
//!   crash never tears a write and never keeps data that was not synced.
//!   The transaction commit (every 30 s) makes all names and truncates
//!   durable.
//! - `posix`: only what POSIX promises, the weakest of all: data and size
//!   after an fsync of the file, a name after an fsync of its folder. Until
//!   then a crash may keep each name change or not (a rename whole), and
//!   leave a file at any length it had since its last fsync.
//!
//! All but btrfs tear unsynced writes at sector granularity (`crash`).

/// ext4's default journal commit interval (`commit=5`).
pub const COMMIT_INTERVAL_DEFAULT_NS: u64 = 5_000_000_000;
/// xfs's log and btrfs's transaction commit about every 30 s.
pub const COMMIT_INTERVAL_30S_NS: u64 = 30_000_000_000;
/// ext4 allocates whole blocks of this many bytes (what servers make).
pub const EXT4_BLOCK_BYTES: u64 = 4096;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FsModel {
    /// Only what POSIX promises: names after a folder fsync, data after a
    /// file fsync; anything else may or may not survive.
    Posix,
    /// An ordered metadata journal committed by any fsync.
    #[default]
    Ext4,
    /// An ordered log committed by any fsync; sizes move with written data.
    Xfs,
    /// Copy on write: an fsync logs the file alone, nothing tears.
    Btrfs,
}

impl FsModel {
    /// Every model, the real file systems first (the order findings are
    /// re-checked and labelled in).
    pub const ALL: [FsModel; 4] = [FsModel::Ext4, FsModel::Xfs, FsModel::Btrfs, FsModel::Posix];

    pub fn name(self) -> &'static str {
        match self {
            FsModel::Posix => "posix",
            FsModel::Ext4 => "ext4",
            FsModel::Xfs => "xfs",
            FsModel::Btrfs => "btrfs",
        }
    }

    /// How a label names it ("fails under xfs too").
    pub fn label(self) -> &'static str {
        match self {
            FsModel::Posix => "strict POSIX",
            m => m.name(),
        }
    }

    pub fn parse(s: &str) -> Option<FsModel> {
        FsModel::ALL.into_iter().find(|m| m.name() == s)
    }

    /// One ordered journal (log) that every fsync commits whole.
    pub fn journal(self) -> bool {
        matches!(self, FsModel::Ext4 | FsModel::Xfs)
    }

    /// Truncates and names are also made durable by a periodic commit.
    pub fn commits(self) -> bool {
        matches!(self, FsModel::Ext4 | FsModel::Xfs | FsModel::Btrfs)
    }

    pub fn commit_interval_default_ns(self) -> u64 {
        match self {
            FsModel::Ext4 => COMMIT_INTERVAL_DEFAULT_NS,
            FsModel::Xfs | FsModel::Btrfs => COMMIT_INTERVAL_30S_NS,
            FsModel::Posix => 0,
        }
    }

    /// ext4: an append ending inside an allocated block sets the size the
    /// next commit writes (`ext4_da_write_end` updating `i_disksize`).
    pub fn size_follows_tail_append(self) -> bool {
        self == FsModel::Ext4
    }

    /// A file renamed over another has its data written before the commit
    /// that makes the rename durable (ext4's auto_da_alloc).
    pub fn flushes_on_rename_over(self) -> bool {
        self == FsModel::Ext4
    }

    /// A file truncated to zero, written and closed has its data written
    /// before the next commit (ext4's auto_da_alloc, xfs's `XFS_ITRUNCATED`).
    pub fn flushes_on_close_after_truncate(self) -> bool {
        matches!(self, FsModel::Ext4 | FsModel::Xfs)
    }

    /// A crash can keep some sectors of unsynced writes (btrfs copies on
    /// write: a write is whole or absent, and absent until synced).
    pub fn tears(self) -> bool {
        self != FsModel::Btrfs
    }

    /// posix: a name change or a size not made durable may still survive.
    pub fn uncertain(self) -> bool {
        self == FsModel::Posix
    }

    /// btrfs: an fsync of a file makes its own names durable, and the folders
    /// on its path.
    pub fn fsync_logs_names(self) -> bool {
        self == FsModel::Btrfs
    }

    /// A folder's fsync makes its names durable without a journal commit.
    pub fn dir_fsync_names(self) -> bool {
        matches!(self, FsModel::Posix | FsModel::Btrfs)
    }
}

/// Weakened guarantees for `seedfall mutate`: does the workload notice?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// fsync of a file returns success and writes nothing (and, under ext4,
    /// commits nothing).
    FsyncNoop,
    /// posix, btrfs: fsync of a directory returns success and makes no name
    /// durable.
    DirFsyncIgnored,
    /// O_SYNC / O_DSYNC writes stay in the cache like ordinary writes.
    OSyncIgnored,
    /// ext4, xfs: fsync writes the file's data but commits no journal:
    /// names and truncates become durable only at the periodic commit.
    JournalOnlyOnTimer,
    /// ext4, xfs: no auto_da_alloc (no flush on close after a truncate):
    /// a replace-via-rename or replace-via-truncate does not write the new
    /// data out first.
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
            Mutation::DirFsyncIgnored => model.dir_fsync_names(),
            Mutation::JournalOnlyOnTimer => model.journal(),
            Mutation::NoAutoDaAlloc => model.flushes_on_close_after_truncate(),
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
