//! The simulated disk of one node instance: an in-memory inode filesystem
//! with a volatile cache in front of a durable image.
//!
//! What reaches the durable image, and when, is the file-system model's
//! business (`model`, docs/disk.md):
//! - file data lives in the cache until `fsync` of that file (or an O_SYNC
//!   write); a crash loses unsynced data, or with torn writes on, a random
//!   subset of its dirty sectors reaches the disk (`crash`);
//! - names (create, rename, unlink, mkdir, rmdir) and truncates become
//!   durable when the parent directory is fsynced (`posix`), or with the
//!   next journal commit, which any fsync and a periodic timer make (`ext4`,
//!   ordered journal);
//! - a failed fsync (EIO) marks the dirty pages clean without writing them
//!   (fsyncgate): reads still see the new data until a crash shows the old,
//!   and later fsyncs succeed.
//!
//! The medium itself can misbehave (`media`): latent sector errors,
//! misdirected and lost writes; corrupt reads are applied where data leaves
//! the disk (the WASI layer).
//!
//! A disk outlives the node instance that uses it: a restarted node sees what
//! the durable image kept. Listings are name-ordered (`BTreeMap`), so
//! `readdir` is deterministic. There are no hard links or symlinks, so every
//! inode has one name, kept on the inode (`parent`, `name`) for paths in the
//! trace.
//!
//! By concept: `names` the namespace (inodes, folders, paths, name changes,
//! orphans), `data` a file's state and the data path, `durability` what
//! makes the cache durable (fsync, write-out, commits), `model` each file
//! system's rules, `crash` what a power loss keeps and `crash_states` every
//! tree it could leave, `media` the medium's faults, `image` the durable
//! image as a difference, `seed` what exists at t=0 and the tree (with its
//! one-line key), `moment` the cache beside the medium at one moment (for
//! a person reading a run). This file holds the `Disk` and its running totals.
mod crash;
mod crash_states;
mod data;
mod durability;
mod image;
mod media;
mod model;
mod moment;
mod names;
mod sectors;
mod seed;
mod space;
#[cfg(test)]
mod tests;

/// A deterministic walk for the disk's model tests: `next(n)` is below `n`
/// (xorshift64 from `seed`).
#[cfg(test)]
fn walk(seed: u64) -> impl FnMut(u64) -> u64 {
    let mut x = seed;
    move |n| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    }
}

pub use crash::{CrashReport, Loss, LOSSES_MAX};
pub use crash_states::{CrashStates, CrashTree, TREES_MAX as CRASH_TREES_MAX};
pub use model::{FsModel, Mutation};
pub use moment::{MomentEntry, MOMENT_ENTRIES_MAX};
pub use data::{FileState, SIZES_SINCE_MAX};
pub use names::{Ino, Inode, Kind, ROOT, UNLINKED};
pub use seed::{tree_key, TreeEntry};
pub use space::{Space, BLOCK_BYTES, INODE_BYTES};
pub(crate) use data::Usage;

use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

/// Bounds: a disk holds at most this many bytes of file data and inodes.
pub const DISK_BYTES_MAX: u64 = 2 << 30;
pub const INODES_MAX: usize = 1 << 20;
pub const NAME_BYTES_MAX: usize = 255;
pub const PATH_DEPTH_MAX: usize = 64;
pub const SECTOR_BYTES_DEFAULT: u64 = 512;

#[derive(Debug, Clone)]
pub struct Disk {
    inodes: BTreeMap<Ino, Inode>,
    ino_next: Ino,
    pub sector_bytes: u64,
    pub model: FsModel,
    /// ext4: the journal commits at least this often (0: only at fsync).
    pub commit_interval_ns: u64,
    last_commit: VTime,
    pub mutation: Option<Mutation>,
    /// Disk operations so far (reads, writes, syncs, metadata changes), over
    /// the whole life of the disk, across restarts of its node.
    pub ops: u64,
    /// fsync calls so far (file and directory).
    pub syncs: u64,
    /// Reads and writes of file data so far (storage faults name them).
    pub reads: u64,
    pub writes: u64,
    /// Host memory the files hold (`FileState::held_bytes`), kept as files change.
    held: u64,
    /// Bytes of file data (what `DISK_BYTES_MAX` bounds), kept as files change.
    size_total: u64,
    /// Bytes the files hold on the medium (`FileState::footprint`), kept as
    /// files change: what counts against `capacity`.
    footprint_total: u64,
    /// What the node's files and folders may hold (`disk.capacity`); `None`:
    /// up to `DISK_BYTES_MAX`.
    pub capacity: Option<u64>,
    /// A `disk_full` fault holds the free space at 0 until then.
    pub full_until: VTime,
    /// Changes accounted, for how often `account` checks its totals.
    accounted: u64,
    /// Inodes no name in the cache reaches any more (unlinked, replaced by a
    /// rename): freed by `collect_orphans` once no durable name reaches them
    /// either and nothing holds them open. Without it a node that writes and
    /// deletes files (a log rotating, an LSM compacting) would hold every
    /// deleted file until its next crash.
    orphans: BTreeSet<Ino>,
    /// Something changed that may free an orphan (a new orphan, a durable
    /// name change, a close).
    orphans_dirty: bool,
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new(SECTOR_BYTES_DEFAULT, FsModel::default())
    }
}

impl Disk {
    pub fn new(sector_bytes: u64, model: FsModel) -> Disk {
        assert!(sector_bytes.is_power_of_two() && sector_bytes >= 64, "sector size {sector_bytes}");
        let mut inodes = BTreeMap::new();
        let root = Kind::Dir { entries: BTreeMap::new(), durable_entries: BTreeMap::new() };
        inodes.insert(ROOT, Inode { kind: root, parent: ROOT, name: String::new(), mtime: VTime::ZERO, ctime: VTime::ZERO });
        Disk {
            inodes,
            ino_next: ROOT + 1,
            sector_bytes,
            model,
            commit_interval_ns: model.commit_interval_default_ns(),
            last_commit: VTime::ZERO,
            mutation: None,
            ops: 0,
            syncs: 0,
            reads: 0,
            writes: 0,
            held: 0,
            size_total: 0,
            footprint_total: 0,
            capacity: None,
            full_until: VTime::ZERO,
            accounted: 0,
            orphans: BTreeSet::new(),
            orphans_dirty: false,
        }
    }

    /// Host memory this disk's files hold.
    pub fn held_bytes(&self) -> u64 {
        self.held
    }

    /// One file's use changed from `before` to `after` (`FileState::usage`).
    pub(super) fn account(&mut self, before: Usage, after: Usage) {
        self.held = self.held - before.held + after.held;
        self.size_total = self.size_total - before.size + after.size;
        self.footprint_total = self.footprint_total - before.footprint + after.footprint;
        // A recount walks every inode: on small disks each time, on large
        // ones every 1024th change, so the check stays on without making a
        // write cost the disk's size.
        self.accounted = self.accounted.wrapping_add(1);
        if cfg!(debug_assertions) && (self.inodes.len() <= 64 || self.accounted % 1024 == 0) {
            assert_eq!(self.totals(), self.recount(), "held bytes drifted");
        }
    }

    pub(super) fn totals(&self) -> Usage {
        Usage { held: self.held, size: self.size_total, footprint: self.footprint_total }
    }

    /// Every file's use summed: after operations on all files at once (a
    /// commit, a crash), and to check the running totals.
    pub(super) fn recount(&self) -> Usage {
        self.inodes.values().fold(Usage::default(), |sum, i| match &i.kind {
            Kind::File(f) => sum.plus(f.usage()),
            Kind::Dir { .. } => sum,
        })
    }

    pub(super) fn recount_all(&mut self) {
        Usage { held: self.held, size: self.size_total, footprint: self.footprint_total } = self.recount();
    }

    pub fn inode(&self, ino: Ino) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(errno::NOENT)
    }

    pub(super) fn inode_mut(&mut self, ino: Ino) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(errno::NOENT)
    }

    pub(super) fn file_mut(&mut self, ino: Ino) -> Result<&mut FileState, Errno> {
        match &mut self.inode_mut(ino)?.kind {
            Kind::File(f) => Ok(f),
            Kind::Dir { .. } => Err(errno::ISDIR),
        }
    }

    pub(super) fn bytes_used(&self) -> u64 {
        self.size_total
    }
}
