//! The simulated disk of one node instance: an in-memory inode filesystem
//! with a volatile cache in front of a durable image.
//!
//! The durability model (docs/disk.md):
//! - file data lives in the cache until `fsync` of that file (or an O_SYNC
//!   write); a crash loses unsynced data, or with torn writes on, a random
//!   subset of its dirty sectors reaches the disk;
//! - names (create, rename, unlink, mkdir, rmdir) live in the cache until the
//!   parent directory is fsynced;
//! - a failed fsync (EIO) marks the dirty pages clean without writing them
//!   (fsyncgate): reads still see the new data until a crash shows the old,
//!   and later fsyncs succeed.
//!
//! A disk outlives the node instance that uses it: a restarted node sees what
//! the durable image kept. Listings are name-ordered (`BTreeMap`), so
//! `readdir` is deterministic. There are no hard links or symlinks.
use crate::vtime::VTime;
use crate::wasi::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

pub type Ino = u64;
pub const ROOT: Ino = 1;
/// Bounds: a disk holds at most this many bytes of file data and inodes.
pub const DISK_BYTES_MAX: u64 = 2 << 30;
pub const INODES_MAX: usize = 1 << 20;
pub const NAME_BYTES_MAX: usize = 255;
pub const PATH_DEPTH_MAX: usize = 64;
pub const SECTOR_BYTES_DEFAULT: u64 = 512;

#[derive(Debug, Clone)]
pub enum Kind {
    File {
        /// What reads see: the cache.
        data: Vec<u8>,
        /// What survives a crash.
        durable: Vec<u8>,
        /// Sectors written since the last successful or failed fsync.
        dirty: BTreeSet<u64>,
    },
    Dir {
        entries: BTreeMap<String, Ino>,
        durable_entries: BTreeMap<String, Ino>,
        parent: Ino,
    },
}

#[derive(Debug, Clone)]
pub struct Inode {
    pub kind: Kind,
    pub mtime: VTime,
    pub ctime: VTime,
}

impl Inode {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, Kind::Dir { .. })
    }
    pub fn size(&self) -> u64 {
        match &self.kind {
            Kind::File { data, .. } => data.len() as u64,
            Kind::Dir { entries, .. } => entries.len() as u64,
        }
    }
    pub fn nlink(&self) -> u64 {
        match &self.kind {
            Kind::File { .. } => 1,
            Kind::Dir { entries, .. } => 2 + entries.len() as u64,
        }
    }
}

/// Weakened guarantees for `seedfall mutate`: does the workload notice?
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mutation {
    /// fsync of a file returns success and writes nothing.
    FsyncNoop,
    /// fsync of a directory returns success and makes no name durable.
    DirFsyncIgnored,
    /// O_SYNC / O_DSYNC writes stay in the cache like ordinary writes.
    OSyncIgnored,
}

impl Mutation {
    pub const ALL: [Mutation; 3] = [Mutation::FsyncNoop, Mutation::DirFsyncIgnored, Mutation::OSyncIgnored];
    pub fn describe(self) -> &'static str {
        match self {
            Mutation::FsyncNoop => "fsync is a no-op",
            Mutation::DirFsyncIgnored => "directory fsync is ignored",
            Mutation::OSyncIgnored => "O_SYNC/O_DSYNC is ignored",
        }
    }
}

#[derive(Debug)]
pub struct Disk {
    inodes: BTreeMap<Ino, Inode>,
    ino_next: Ino,
    pub sector_bytes: u64,
    pub mutation: Option<Mutation>,
    /// Disk operations so far (reads, writes, syncs, metadata changes), over
    /// the whole life of the disk, across restarts of its node.
    pub ops: u64,
    /// fsync calls so far (file and directory).
    pub syncs: u64,
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new(SECTOR_BYTES_DEFAULT)
    }
}

impl Disk {
    pub fn new(sector_bytes: u64) -> Disk {
        assert!(sector_bytes.is_power_of_two() && sector_bytes >= 64, "sector size {sector_bytes}");
        let mut inodes = BTreeMap::new();
        let root = Kind::Dir { entries: BTreeMap::new(), durable_entries: BTreeMap::new(), parent: ROOT };
        inodes.insert(ROOT, Inode { kind: root, mtime: VTime::ZERO, ctime: VTime::ZERO });
        Disk { inodes, ino_next: ROOT + 1, sector_bytes, mutation: None, ops: 0, syncs: 0 }
    }

    pub fn inode(&self, ino: Ino) -> Result<&Inode, Errno> {
        self.inodes.get(&ino).ok_or(errno::NOENT)
    }

    fn inode_mut(&mut self, ino: Ino) -> Result<&mut Inode, Errno> {
        self.inodes.get_mut(&ino).ok_or(errno::NOENT)
    }

    fn entries(&self, dir: Ino) -> Result<&BTreeMap<String, Ino>, Errno> {
        match &self.inode(dir)?.kind {
            Kind::Dir { entries, .. } => Ok(entries),
            Kind::File { .. } => Err(errno::NOTDIR),
        }
    }

    fn entries_mut(&mut self, dir: Ino) -> Result<&mut BTreeMap<String, Ino>, Errno> {
        match &mut self.inode_mut(dir)?.kind {
            Kind::Dir { entries, .. } => Ok(entries),
            Kind::File { .. } => Err(errno::NOTDIR),
        }
    }

    fn parent_of(&self, dir: Ino) -> Result<Ino, Errno> {
        match &self.inode(dir)?.kind {
            Kind::Dir { parent, .. } => Ok(*parent),
            Kind::File { .. } => Err(errno::NOTDIR),
        }
    }

    fn bytes_used(&self) -> u64 {
        self.inodes.values().map(|i| i.size()).sum()
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

    fn alloc(&mut self, kind: Kind, now: VTime) -> Result<Ino, Errno> {
        if self.inodes.len() >= INODES_MAX {
            return Err(errno::NOSPC);
        }
        let ino = self.ino_next;
        self.ino_next += 1;
        self.inodes.insert(ino, Inode { kind, mtime: now, ctime: now });
        Ok(ino)
    }

    pub fn create_file(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let ino = self.alloc(Kind::File { data: Vec::new(), durable: Vec::new(), dirty: BTreeSet::new() }, now)?;
        self.entries_mut(parent)?.insert(name.to_string(), ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(ino)
    }

    pub fn mkdir(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let dir = Kind::Dir { entries: BTreeMap::new(), durable_entries: BTreeMap::new(), parent };
        let ino = self.alloc(dir, now)?;
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
        if let Some(&existing) = self.entries(to_dir)?.get(to) {
            if existing == ino {
                return Ok(());
            }
            match (moving_dir, self.inode(existing)?.is_dir()) {
                (false, true) => return Err(errno::ISDIR),
                (true, false) => return Err(errno::NOTDIR),
                (true, true) if !self.entries(existing)?.is_empty() => return Err(errno::NOTEMPTY),
                _ => {}
            }
        }
        self.entries_mut(from_dir)?.remove(from);
        self.entries_mut(to_dir)?.insert(to.to_string(), ino);
        if moving_dir {
            if let Kind::Dir { parent, .. } = &mut self.inode_mut(ino)?.kind {
                *parent = to_dir;
            }
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

    pub fn read_at(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, Errno> {
        self.ops += 1;
        match &self.inode(ino)?.kind {
            Kind::File { data, .. } => {
                if offset >= data.len() as u64 {
                    return Ok(0);
                }
                let start = offset as usize;
                let n = buf.len().min(data.len() - start);
                buf[..n].copy_from_slice(&data[start..start + n]);
                Ok(n)
            }
            Kind::Dir { .. } => Err(errno::ISDIR),
        }
    }

    pub fn write_at(&mut self, ino: Ino, offset: u64, bytes: &[u8], now: VTime) -> Result<usize, Errno> {
        let end = offset.checked_add(bytes.len() as u64).ok_or(errno::FBIG)?;
        let old = self.inode(ino)?.size();
        if self.bytes_used() + end.saturating_sub(old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let sector = self.sector_bytes;
        let inode = self.inode_mut(ino)?;
        let Kind::File { data, dirty, .. } = &mut inode.kind else { return Err(errno::ISDIR) };
        if end as usize > data.len() {
            // Growing zero-fills from the old end: those sectors are dirty too.
            for s in (data.len() as u64 / sector)..offset.div_ceil(sector) {
                dirty.insert(s);
            }
            data.resize(end as usize, 0);
        }
        data[offset as usize..end as usize].copy_from_slice(bytes);
        if !bytes.is_empty() {
            for s in (offset / sector)..=((end - 1) / sector) {
                dirty.insert(s);
            }
        }
        inode.mtime = now;
        self.ops += 1;
        Ok(bytes.len())
    }

    pub fn set_size(&mut self, ino: Ino, size: u64, now: VTime) -> Result<(), Errno> {
        let old = self.inode(ino)?.size();
        if size > old && self.bytes_used() + (size - old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let sector = self.sector_bytes;
        let inode = self.inode_mut(ino)?;
        let Kind::File { data, dirty, .. } = &mut inode.kind else { return Err(errno::ISDIR) };
        let (lo, hi) = (old.min(size), old.max(size));
        if hi > lo {
            for s in (lo / sector)..hi.div_ceil(sector) {
                dirty.insert(s);
            }
        }
        data.resize(size as usize, 0);
        inode.mtime = now;
        self.ops += 1;
        Ok(())
    }

    /// fsync: makes a file's data, or a directory's names, durable.
    /// With `fail` the pages are marked clean unwritten and EIO returned.
    pub fn sync(&mut self, ino: Ino, fail: bool) -> Result<(), Errno> {
        self.ops += 1;
        self.syncs += 1;
        let mutation = self.mutation;
        let sector = self.sector_bytes as usize;
        match &mut self.inode_mut(ino)?.kind {
            Kind::File { data, durable, dirty } => {
                if fail {
                    dirty.clear();
                    return Err(errno::IO);
                }
                if mutation == Some(Mutation::FsyncNoop) {
                    return Ok(());
                }
                durable.resize(data.len(), 0);
                for &s in dirty.iter() {
                    let start = s as usize * sector;
                    if start >= data.len() {
                        continue;
                    }
                    let end = (start + sector).min(data.len());
                    durable[start..end].copy_from_slice(&data[start..end]);
                }
                dirty.clear();
                Ok(())
            }
            Kind::Dir { entries, durable_entries, .. } => {
                if fail {
                    return Err(errno::IO);
                }
                if mutation != Some(Mutation::DirFsyncIgnored) {
                    *durable_entries = entries.clone();
                }
                Ok(())
            }
        }
    }

    /// Sectors of a file not yet durable (for tests and the timeline).
    pub fn dirty_sectors(&self, ino: Ino) -> usize {
        match self.inodes.get(&ino).map(|i| &i.kind) {
            Some(Kind::File { dirty, .. }) => dirty.len(),
            _ => 0,
        }
    }

    /// Power loss: everything not durable is lost. With `torn`, each dirty
    /// sector independently reaches the disk when `keep_sector()` says so.
    /// Returns how many dirty sectors were lost and kept.
    pub fn crash(&mut self, torn: bool, mut keep_sector: impl FnMut() -> bool) -> (u64, u64) {
        let sector = self.sector_bytes as usize;
        let (mut lost, mut kept) = (0u64, 0u64);
        for inode in self.inodes.values_mut() {
            match &mut inode.kind {
                Kind::File { data, durable, dirty } => {
                    for &s in dirty.iter() {
                        let start = s as usize * sector;
                        if torn && start < data.len() && keep_sector() {
                            let end = (start + sector).min(data.len());
                            if durable.len() < end {
                                durable.resize(end, 0);
                            }
                            durable[start..end].copy_from_slice(&data[start..end]);
                            kept += 1;
                        } else {
                            lost += 1;
                        }
                    }
                    *data = durable.clone();
                    dirty.clear();
                }
                Kind::Dir { entries, durable_entries, .. } => *entries = durable_entries.clone(),
            }
        }
        self.collect_unreachable();
        (lost, kept)
    }

    /// Drops inodes no durable name reaches, and re-derives parent links.
    fn collect_unreachable(&mut self) {
        let mut reachable = BTreeSet::from([ROOT]);
        let mut stack = vec![ROOT];
        let mut parents = Vec::new();
        while let Some(dir) = stack.pop() {
            let children: Vec<Ino> = match &self.inodes[&dir].kind {
                Kind::Dir { entries, .. } => entries.values().copied().collect(),
                Kind::File { .. } => continue,
            };
            for child in children {
                if self.inodes.contains_key(&child) && reachable.insert(child) {
                    parents.push((child, dir));
                    stack.push(child);
                }
            }
        }
        self.inodes.retain(|ino, _| reachable.contains(ino));
        for (child, dir) in parents {
            if let Some(Inode { kind: Kind::Dir { parent, .. }, .. }) = self.inodes.get_mut(&child) {
                *parent = dir;
            }
        }
        // A name may point at an inode that was never made durable: drop it.
        let live: BTreeSet<Ino> = self.inodes.keys().copied().collect();
        for inode in self.inodes.values_mut() {
            if let Kind::Dir { entries, durable_entries, .. } = &mut inode.kind {
                entries.retain(|_, i| live.contains(i));
                durable_entries.retain(|_, i| live.contains(i));
            }
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

#[cfg(test)]
mod tests {
    use super::*;

    const T: VTime = VTime(1);

    fn read_all(d: &mut Disk, path: &str) -> Result<Vec<u8>, Errno> {
        let ino = d.lookup(ROOT, path)?;
        let mut buf = vec![0u8; 1 << 16];
        let n = d.read_at(ino, 0, &mut buf)?;
        Ok(buf[..n].to_vec())
    }

    #[test]
    fn files_and_directories() {
        let mut d = Disk::default();
        let dir = d.mkdir(ROOT, "data", T).unwrap();
        let f = d.create_file(dir, "log", T).unwrap();
        d.write_at(f, 0, b"hello", T).unwrap();
        d.write_at(f, 3, b"p!", T).unwrap();
        assert_eq!(read_all(&mut d, "data/log").unwrap(), b"help!");
        assert_eq!(d.lookup(ROOT, "data/../data/./log").unwrap(), f);
        assert_eq!(d.lookup(ROOT, "../../data/log").unwrap(), f, ".. stops at the root");
        assert_eq!(d.create_file(dir, "log", T), Err(errno::EXIST));
        assert_eq!(d.rmdir(ROOT, "data", T), Err(errno::NOTEMPTY));
        d.rename(dir, "log", ROOT, "moved", T).unwrap();
        assert_eq!(d.lookup(ROOT, "data/log"), Err(errno::NOENT));
        assert_eq!(d.lookup(ROOT, "moved").unwrap(), f);
        d.rmdir(ROOT, "data", T).unwrap();
        let names: Vec<String> = d.list(ROOT).unwrap().into_iter().map(|e| e.0).collect();
        assert_eq!(names, [".", "..", "moved"]);
    }

    #[test]
    fn rename_refuses_to_move_a_dir_into_itself() {
        let mut d = Disk::default();
        let a = d.mkdir(ROOT, "a", T).unwrap();
        d.mkdir(a, "b", T).unwrap();
        let b = d.lookup(ROOT, "a/b").unwrap();
        assert_eq!(d.rename(ROOT, "a", b, "a", T), Err(errno::INVAL));
    }

    #[test]
    fn unsynced_data_is_lost_synced_data_kept() {
        let mut d = Disk::default();
        let f = d.create_file(ROOT, "f", T).unwrap();
        d.sync(ROOT, false).unwrap();
        d.write_at(f, 0, b"synced", T).unwrap();
        d.sync(f, false).unwrap();
        d.write_at(f, 6, b" and not", T).unwrap();
        assert_eq!(read_all(&mut d, "f").unwrap(), b"synced and not");
        d.crash(false, || true);
        assert_eq!(read_all(&mut d, "f").unwrap(), b"synced");
    }

    #[test]
    fn names_need_a_directory_fsync() {
        let mut d = Disk::default();
        let f = d.create_file(ROOT, "new", T).unwrap();
        d.write_at(f, 0, b"x", T).unwrap();
        d.sync(f, false).unwrap();
        d.crash(false, || true);
        assert_eq!(d.lookup(ROOT, "new"), Err(errno::NOENT), "file fsync alone does not make the name durable");
        let f = d.create_file(ROOT, "old", T).unwrap();
        d.write_at(f, 0, b"v1", T).unwrap();
        d.sync(f, false).unwrap();
        d.sync(ROOT, false).unwrap();
        d.rename(ROOT, "old", ROOT, "renamed", T).unwrap();
        d.crash(false, || true);
        assert_eq!(read_all(&mut d, "old").unwrap(), b"v1", "rename without directory fsync is undone");
        assert_eq!(d.lookup(ROOT, "renamed"), Err(errno::NOENT));
    }

    #[test]
    fn torn_writes_keep_whole_sectors() {
        let mut d = Disk::new(512);
        let f = d.create_file(ROOT, "t", T).unwrap();
        d.sync(ROOT, false).unwrap();
        d.write_at(f, 0, &vec![b'a'; 2048], T).unwrap();
        let mut flips = [true, false, true, false].into_iter();
        let (lost, kept) = d.crash(true, || flips.next().unwrap());
        assert_eq!((lost, kept), (2, 2));
        let data = read_all(&mut d, "t").unwrap();
        assert_eq!(data.len(), 1536, "sectors 0 and 2 reached the disk, 1 as zeros in between");
        assert!(data[..512].iter().all(|&b| b == b'a'));
        assert!(data[512..1024].iter().all(|&b| b == 0));
        assert!(data[1024..1536].iter().all(|&b| b == b'a'));
    }

    #[test]
    fn fsyncgate_drops_the_failed_pages() {
        let mut d = Disk::default();
        let f = d.create_file(ROOT, "g", T).unwrap();
        d.sync(ROOT, false).unwrap();
        d.write_at(f, 0, b"lost", T).unwrap();
        assert_eq!(d.sync(f, true), Err(errno::IO));
        assert_eq!(read_all(&mut d, "g").unwrap(), b"lost", "the cache still shows the data");
        assert_eq!(d.sync(f, false), Ok(()), "a later fsync succeeds");
        d.crash(false, || true);
        // The later fsync wrote the metadata (the new size) but not the
        // dropped pages: the file reads as zeros, as on Linux after fsyncgate.
        assert_eq!(read_all(&mut d, "g").unwrap(), vec![0u8; 4], "the data never reached the disk");
    }

    #[test]
    fn mutations_weaken_guarantees() {
        let mut d = Disk::default();
        d.mutation = Some(Mutation::FsyncNoop);
        let f = d.create_file(ROOT, "m", T).unwrap();
        d.sync(ROOT, false).unwrap();
        d.write_at(f, 0, b"x", T).unwrap();
        d.sync(f, false).unwrap();
        d.crash(false, || true);
        assert_eq!(read_all(&mut d, "m").unwrap(), b"");
        let mut d = Disk::default();
        d.mutation = Some(Mutation::DirFsyncIgnored);
        d.create_file(ROOT, "n", T).unwrap();
        d.sync(ROOT, false).unwrap();
        d.crash(false, || true);
        assert_eq!(d.lookup(ROOT, "n"), Err(errno::NOENT));
    }
}
