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
mod crash;
mod crash_states;
mod data;
mod image;
mod media;
mod model;
mod seed;
#[cfg(test)]
mod tests;

pub use crash::{CrashReport, Loss, LOSSES_MAX};
pub use crash_states::{tree_key, CrashStates, CrashTree, TREES_MAX as CRASH_TREES_MAX};
pub use model::{FsModel, Mutation};
pub use seed::TreeEntry;


use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

pub type Ino = u64;
pub const ROOT: Ino = 1;
/// The `parent` of an inode no name reaches any more (unlinked, still open).
pub const UNLINKED: Ino = 0;
/// Bounds: a disk holds at most this many bytes of file data and inodes.
pub const DISK_BYTES_MAX: u64 = 2 << 30;
pub const INODES_MAX: usize = 1 << 20;
pub const NAME_BYTES_MAX: usize = 255;
pub const PATH_DEPTH_MAX: usize = 64;
pub const SECTOR_BYTES_DEFAULT: u64 = 512;

#[derive(Debug, Clone, Default)]
pub struct FileState {
    /// What reads see: the cache.
    pub data: Vec<u8>,
    /// What survives a crash, as its difference from `data`.
    pub image: image::Image,
    /// Sectors written since the last successful or failed fsync.
    pub dirty: BTreeSet<u64>,
    /// Dirty sectors whose next write-out lands on another sector (a
    /// misdirected write): sector -> where it lands.
    pub misdirected: BTreeMap<u64, u64>,
    /// Sectors the medium cannot read (latent sector errors) until rewritten.
    pub bad: BTreeSet<u64>,
    /// ext4, xfs, btrfs: the size the next commit makes durable (a truncate,
    /// or on ext4 an append inside an allocated block).
    pub pending_size: Option<u64>,
    /// ext4, xfs, btrfs: the least size a truncate set since the last
    /// commit. Its blocks past that were freed: what is written there since
    /// lands on new blocks, which show only once a commit makes the size
    /// durable, so a crash before it shows none of it.
    pub truncated_to: Option<u64>,
    /// ext4: truncated to zero since the last commit (replace-via-truncate).
    pub truncated_to_zero: bool,
    /// ext4 (auto_da_alloc): write this file's dirty data out before the
    /// next journal commit.
    pub flush_on_commit: bool,
    /// posix: every size the file had since its size was last durable (at
    /// most `SIZES_SINCE_MAX`, the latest): a crash may leave any of them.
    pub sizes_since: Vec<u64>,
}

/// Bound on the sizes a posix file remembers between fsyncs. A file that
/// changes size more often keeps its latest sizes: a crash can then leave
/// fewer of its lengths than a real file system could.
pub const SIZES_SINCE_MAX: usize = 32;

impl FileState {
    fn note_size(&mut self, size: u64) {
        if self.sizes_since.last() == Some(&size) {
            return;
        }
        if self.sizes_since.len() >= SIZES_SINCE_MAX {
            self.sizes_since.remove(0);
        }
        self.sizes_since.push(size);
    }

    /// Host memory this file holds: its cache, and its image's shadow.
    pub fn held_bytes(&self) -> u64 {
        self.data.capacity() as u64 + self.image.held_bytes()
    }
}

/// Grows a file's cache to `len` with zeros, with room for an eighth more:
/// appends stay cheap, and the cache never holds twice what the file is
/// (a doubling `Vec` would, and the memory budget counts capacity).
fn grow_to(data: &mut Vec<u8>, len: usize) {
    if len > data.capacity() {
        let want = len.max(data.capacity() + data.capacity() / 8);
        data.reserve_exact(want - data.len());
    }
    data.resize(len, 0);
}

#[derive(Debug, Clone)]
pub enum Kind {
    File(FileState),
    Dir {
        entries: BTreeMap<String, Ino>,
        durable_entries: BTreeMap<String, Ino>,
    },
}

#[derive(Debug, Clone)]
pub struct Inode {
    pub kind: Kind,
    /// The directory holding this inode's one name (`UNLINKED` when none;
    /// the root is its own parent).
    pub parent: Ino,
    pub name: String,
    pub mtime: VTime,
    pub ctime: VTime,
}

impl Inode {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, Kind::Dir { .. })
    }
    pub fn size(&self) -> u64 {
        match &self.kind {
            Kind::File(f) => f.data.len() as u64,
            Kind::Dir { entries, .. } => entries.len() as u64,
        }
    }
    pub fn nlink(&self) -> u64 {
        match &self.kind {
            Kind::File(_) => 1,
            Kind::Dir { entries, .. } => 2 + entries.len() as u64,
        }
    }
}

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
            accounted: 0,
            orphans: BTreeSet::new(),
            orphans_dirty: false,
        }
    }

    fn orphan(&mut self, ino: Ino) {
        self.inode_mut(ino).map(|i| i.parent = UNLINKED).ok();
        self.orphans.insert(ino);
        self.orphans_dirty = true;
    }

    /// Durable names may have changed, or a descriptor closed.
    pub fn note_orphans_may_go(&mut self) {
        self.orphans_dirty |= !self.orphans.is_empty();
    }

    /// Frees the orphans no durable name reaches and `held` does not hold
    /// (open descriptors and mappings of the disk's node).
    pub fn collect_orphans(&mut self, held: impl Fn(Ino) -> bool) {
        if !std::mem::take(&mut self.orphans_dirty) {
            return;
        }
        let durable: BTreeSet<Ino> = self.inodes.values().filter_map(|i| match &i.kind {
            Kind::Dir { durable_entries, .. } => Some(durable_entries.values().copied()),
            Kind::File(_) => None,
        }).flatten().collect();
        let free: Vec<Ino> = self.orphans.iter().copied().filter(|ino| !durable.contains(ino) && !held(*ino)).collect();
        for ino in free {
            self.orphans.remove(&ino);
            // A folder removed while it still has (durable) entries keeps them.
            if matches!(self.inodes.get(&ino).map(|i| &i.kind), Some(Kind::Dir { durable_entries, .. }) if !durable_entries.is_empty()) {
                continue;
            }
            if let Some(Inode { kind: Kind::File(f), .. }) = self.inodes.remove(&ino) {
                self.held -= f.held_bytes();
                self.size_total -= f.data.len() as u64;
            }
        }
    }

    /// Inodes kept for open descriptors or durable names only (for tests).
    pub fn orphans(&self) -> usize {
        self.orphans.len()
    }

    /// Host memory this disk's files hold.
    pub fn held_bytes(&self) -> u64 {
        self.held
    }

    /// One file changed from holding `held_before` to `held_after` bytes of
    /// memory and from `size_before` to `size_after` bytes of data.
    fn account(&mut self, held_before: u64, held_after: u64, size_before: u64, size_after: u64) {
        self.held = self.held - held_before + held_after;
        self.size_total = self.size_total - size_before + size_after;
        // A recount walks every inode: on small disks each time, on large
        // ones every 1024th change, so the check stays on without making a
        // write cost the disk's size.
        self.accounted = self.accounted.wrapping_add(1);
        if cfg!(debug_assertions) && (self.inodes.len() <= 64 || self.accounted % 1024 == 0) {
            assert_eq!((self.held, self.size_total), self.recount(), "held bytes drifted");
        }
    }

    /// (held, size) summed over every file: after operations on all files
    /// at once (a commit, a crash), and to check the running totals.
    fn recount(&self) -> (u64, u64) {
        self.inodes.values().fold((0, 0), |(h, n), i| match &i.kind {
            Kind::File(f) => (h + f.held_bytes(), n + f.data.len() as u64),
            Kind::Dir { .. } => (h, n),
        })
    }

    fn recount_all(&mut self) {
        (self.held, self.size_total) = self.recount();
    }

    pub fn inode(&self, ino: Ino) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(errno::NOENT)
    }

    fn inode_mut(&mut self, ino: Ino) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(errno::NOENT)
    }

    fn file_mut(&mut self, ino: Ino) -> Result<&mut FileState, Errno> {
        match &mut self.inode_mut(ino)?.kind {
            Kind::File(f) => Ok(f),
            Kind::Dir { .. } => Err(errno::ISDIR),
        }
    }

    fn entries(&self, dir: Ino) -> Result<&BTreeMap<String, Ino>, Errno> {
        match &self.inode(dir)?.kind {
            Kind::Dir { entries, .. } => Ok(entries),
            Kind::File(_) => Err(errno::NOTDIR),
        }
    }

    fn entries_mut(&mut self, dir: Ino) -> Result<&mut BTreeMap<String, Ino>, Errno> {
        match &mut self.inode_mut(dir)?.kind {
            Kind::Dir { entries, .. } => Ok(entries),
            Kind::File(_) => Err(errno::NOTDIR),
        }
    }

    fn parent_of(&self, dir: Ino) -> Result<Ino, Errno> {
        let i = self.inode(dir)?;
        if !i.is_dir() {
            return Err(errno::NOTDIR);
        }
        Ok(i.parent)
    }

    fn bytes_used(&self) -> u64 {
        self.size_total
    }

    /// The inode's path in the cache's tree (`/data/log`), or, for an inode
    /// no name reaches, its last name marked as unlinked.
    pub fn path_of(&self, ino: Ino) -> String {
        let mut parts = Vec::new();
        let mut cur = ino;
        for _ in 0..=PATH_DEPTH_MAX * 4 {
            if cur == ROOT {
                break;
            }
            let Some(i) = self.inodes.get(&cur) else { return "(gone)".into() };
            if i.parent == UNLINKED {
                return format!("(unlinked) {}", i.name);
            }
            parts.push(i.name.as_str());
            cur = i.parent;
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }

    /// Walks `path` from directory `start`. `..` never climbs above the root.
    pub fn lookup(&self, start: Ino, path: &str) -> Result<Ino, Errno> {
        let mut cur = start;
        for (depth, comp) in path.split('/').enumerate() {
            if depth > PATH_DEPTH_MAX * 4 {
                return Err(errno::NAMETOOLONG);
            }
            match comp {
                "" | "." => {
                    self.entries(cur)?;
                }
                ".." => cur = self.parent_of(cur)?,
                name => cur = *self.entries(cur)?.get(name).ok_or(errno::NOENT)?,
            }
        }
        Ok(cur)
    }

    /// The folder `path` (from `start`) would be in, as an absolute path,
    /// when it does not exist: what a seeded `dirs` entry would need to name.
    /// `None` when the folder exists (only the last component is missing).
    pub fn missing_dir(&self, start: Ino, path: &str) -> Option<String> {
        let trimmed = path.trim_end_matches('/');
        let (dir_part, _) = trimmed.rsplit_once('/')?;
        let comps: Vec<&str> = dir_part.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
        let mut cur = start;
        for (i, comp) in comps.iter().enumerate() {
            if *comp == ".." {
                cur = self.parent_of(cur).ok()?;
                continue;
            }
            match self.entries(cur).ok()?.get(*comp) {
                Some(&next) => cur = next,
                None => {
                    let base = self.path_of(cur);
                    let rest = comps[i..].join("/");
                    return Some(if base == "/" { format!("/{rest}") } else { format!("{base}/{rest}") });
                }
            }
        }
        None
    }

    /// Splits `path` into its parent directory (resolved) and final name.
    pub fn resolve_parent(&self, start: Ino, path: &str) -> Result<(Ino, String), Errno> {
        let trimmed = path.trim_end_matches('/');
        if trimmed.is_empty() {
            return Err(errno::INVAL);
        }
        let (dir_part, name) = match trimmed.rfind('/') {
            Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
            None => ("", trimmed),
        };
        if name == "." || name == ".." {
            return Err(errno::INVAL);
        }
        if name.len() > NAME_BYTES_MAX {
            return Err(errno::NAMETOOLONG);
        }
        let parent = self.lookup(start, dir_part)?;
        self.entries(parent)?;
        Ok((parent, name.to_string()))
    }

    fn alloc(&mut self, kind: Kind, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.inodes.len() >= INODES_MAX {
            return Err(errno::NOSPC);
        }
        let ino = self.ino_next;
        self.ino_next += 1;
        self.inodes.insert(ino, Inode { kind, parent, name: name.to_string(), mtime: now, ctime: now });
        Ok(ino)
    }

    pub fn create_file(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let ino = self.alloc(Kind::File(FileState::default()), parent, name, now)?;
        self.entries_mut(parent)?.insert(name.to_string(), ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(ino)
    }

    pub fn mkdir(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let dir = Kind::Dir { entries: BTreeMap::new(), durable_entries: BTreeMap::new() };
        let ino = self.alloc(dir, parent, name, now)?;
        self.entries_mut(parent)?.insert(name.to_string(), ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(ino)
    }

    pub fn unlink(&mut self, parent: Ino, name: &str, now: VTime) -> Result<(), Errno> {
        let ino = *self.entries(parent)?.get(name).ok_or(errno::NOENT)?;
        if self.inode(ino)?.is_dir() {
            return Err(errno::ISDIR);
        }
        self.entries_mut(parent)?.remove(name);
        self.orphan(ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(())
    }

    pub fn rmdir(&mut self, parent: Ino, name: &str, now: VTime) -> Result<(), Errno> {
        let ino = *self.entries(parent)?.get(name).ok_or(errno::NOENT)?;
        if !self.entries(ino)?.is_empty() {
            return Err(errno::NOTEMPTY);
        }
        self.entries_mut(parent)?.remove(name);
        self.orphan(ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(())
    }

    /// POSIX rename: replaces a file target, or an empty directory target.
    pub fn rename(&mut self, from_dir: Ino, from: &str, to_dir: Ino, to: &str, now: VTime) -> Result<(), Errno> {
        let ino = *self.entries(from_dir)?.get(from).ok_or(errno::NOENT)?;
        let moving_dir = self.inode(ino)?.is_dir();
        if moving_dir && self.is_ancestor(ino, to_dir)? {
            return Err(errno::INVAL);
        }
        let mut replaced_file = false;
        if let Some(&existing) = self.entries(to_dir)?.get(to) {
            if existing == ino {
                return Ok(());
            }
            match (moving_dir, self.inode(existing)?.is_dir()) {
                (false, true) => return Err(errno::ISDIR),
                (true, false) => return Err(errno::NOTDIR),
                (true, true) if !self.entries(existing)?.is_empty() => return Err(errno::NOTEMPTY),
                (false, false) => replaced_file = true,
                _ => {}
            }
            self.orphan(existing);
        }
        self.entries_mut(from_dir)?.remove(from);
        self.entries_mut(to_dir)?.insert(to.to_string(), ino);
        let i = self.inode_mut(ino)?;
        i.parent = to_dir;
        i.name = to.to_string();
        if replaced_file {
            self.replaced_via_rename(ino);
        }
        self.touch(from_dir, now);
        self.touch(to_dir, now);
        self.ops += 1;
        Ok(())
    }

    fn is_ancestor(&self, ancestor: Ino, mut dir: Ino) -> Result<bool, Errno> {
        for _ in 0..=self.inodes.len() {
            if dir == ancestor {
                return Ok(true);
            }
            if dir == ROOT {
                return Ok(false);
            }
            dir = self.parent_of(dir)?;
        }
        unreachable!("directory tree deeper than its inode count");
    }

    fn touch(&mut self, ino: Ino, now: VTime) {
        if let Some(i) = self.inodes.get_mut(&ino) {
            i.mtime = now;
            i.ctime = now;
        }
    }

    /// Directory entries in name order, with `.` and `..` first.
    pub fn list(&self, dir: Ino) -> Result<Vec<(String, Ino, bool)>, Errno> {
        let entries = self.entries(dir)?;
        let mut out = vec![(".".to_string(), dir, true), ("..".to_string(), self.parent_of(dir)?, true)];
        for (name, &ino) in entries {
            out.push((name.clone(), ino, self.inode(ino)?.is_dir()));
        }
        Ok(out)
    }

}
