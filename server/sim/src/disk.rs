//! The simulated disk of one node instance: an in-memory inode filesystem.
//!
//! A disk outlives the node instance that uses it (a restarted node sees what
//! the disk kept). In this version every write is durable at once; the
//! volatile-cache and crash model extends this module without changing the
//! WASI layer above it. Directory listings are name-ordered (`BTreeMap`), so
//! `readdir` is deterministic.
use crate::vtime::VTime;
use crate::wasi::errno::{self, Errno};
use std::collections::BTreeMap;

pub type Ino = u64;
pub const ROOT: Ino = 1;
/// Bounds: a disk holds at most this many bytes of file data and inodes.
pub const DISK_BYTES_MAX: u64 = 2 << 30;
pub const INODES_MAX: usize = 1 << 20;
pub const NAME_BYTES_MAX: usize = 255;
pub const PATH_DEPTH_MAX: usize = 64;

#[derive(Debug)]
pub enum Kind {
    File { data: Vec<u8> },
    Dir { entries: BTreeMap<String, Ino>, parent: Ino },
}

#[derive(Debug)]
pub struct Inode {
    pub kind: Kind,
    pub nlink: u64,
    pub mtime: VTime,
    pub ctime: VTime,
}

impl Inode {
    pub fn is_dir(&self) -> bool {
        matches!(self.kind, Kind::Dir { .. })
    }
    pub fn size(&self) -> u64 {
        match &self.kind {
            Kind::File { data } => data.len() as u64,
            Kind::Dir { entries, .. } => entries.len() as u64,
        }
    }
}

#[derive(Debug)]
pub struct Disk {
    inodes: BTreeMap<Ino, Inode>,
    ino_next: Ino,
    bytes_used: u64,
    /// Disk operations so far (reads, writes, syncs, metadata changes).
    pub ops: u64,
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new()
    }
}

impl Disk {
    pub fn new() -> Disk {
        let mut inodes = BTreeMap::new();
        inodes.insert(
            ROOT,
            Inode { kind: Kind::Dir { entries: BTreeMap::new(), parent: ROOT }, nlink: 2, mtime: VTime::ZERO, ctime: VTime::ZERO },
        );
        Disk { inodes, ino_next: ROOT + 1, bytes_used: 0, ops: 0 }
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

    /// Walks `path` from directory `start`. `..` never climbs above the root.
    pub fn lookup(&self, start: Ino, path: &str) -> Result<Ino, Errno> {
        let mut cur = start;
        let mut depth = 0;
        for comp in path.split('/') {
            depth += 1;
            if depth > PATH_DEPTH_MAX * 4 {
                return Err(errno::NAMETOOLONG);
            }
            match comp {
                "" | "." => {
                    self.entries(cur)?;
                }
                ".." => cur = self.parent_of(cur)?,
                name => {
                    cur = *self.entries(cur)?.get(name).ok_or(errno::NOENT)?;
                }
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
        let nlink = if matches!(kind, Kind::Dir { .. }) { 2 } else { 1 };
        self.inodes.insert(ino, Inode { kind, nlink, mtime: now, ctime: now });
        Ok(ino)
    }

    pub fn create_file(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let ino = self.alloc(Kind::File { data: Vec::new() }, now)?;
        self.entries_mut(parent)?.insert(name.to_string(), ino);
        self.touch(parent, now);
        self.ops += 1;
        Ok(ino)
    }

    pub fn mkdir(&mut self, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
        if self.entries(parent)?.contains_key(name) {
            return Err(errno::EXIST);
        }
        let ino = self.alloc(Kind::Dir { entries: BTreeMap::new(), parent }, now)?;
        self.entries_mut(parent)?.insert(name.to_string(), ino);
        self.inode_mut(parent)?.nlink += 1;
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
        self.release_link(ino);
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
        self.inodes.remove(&ino);
        self.inode_mut(parent)?.nlink -= 1;
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
            let existing_dir = self.inode(existing)?.is_dir();
            match (moving_dir, existing_dir) {
                (false, true) => return Err(errno::ISDIR),
                (true, false) => return Err(errno::NOTDIR),
                (true, true) => {
                    if !self.entries(existing)?.is_empty() {
                        return Err(errno::NOTEMPTY);
                    }
                    self.inodes.remove(&existing);
                    self.inode_mut(to_dir)?.nlink -= 1;
                }
                (false, false) => self.release_link(existing),
            }
        }
        self.entries_mut(from_dir)?.remove(from);
        self.entries_mut(to_dir)?.insert(to.to_string(), ino);
        if moving_dir {
            if let Kind::Dir { parent, .. } = &mut self.inode_mut(ino)?.kind {
                *parent = to_dir;
            }
            self.inode_mut(from_dir)?.nlink -= 1;
            self.inode_mut(to_dir)?.nlink += 1;
        }
        self.touch(from_dir, now);
        self.touch(to_dir, now);
        self.ops += 1;
        Ok(())
    }

    fn is_ancestor(&self, ancestor: Ino, mut dir: Ino) -> Result<bool, Errno> {
        for _ in 0..INODES_MAX {
            if dir == ancestor {
                return Ok(true);
            }
            if dir == ROOT {
                return Ok(false);
            }
            dir = self.parent_of(dir)?;
        }
        unreachable!("directory tree deeper than the inode bound");
    }

    /// Drops one link; the data of a file with no links is freed. (Open
    /// descriptors of an unlinked file keep reading what they had only in
    /// a later version; today they get EBADF-free empty reads.)
    fn release_link(&mut self, ino: Ino) {
        let inode = self.inodes.get_mut(&ino).expect("linked inode exists");
        inode.nlink -= 1;
        if inode.nlink == 0 {
            let size = inode.size();
            self.bytes_used -= size;
            self.inodes.remove(&ino);
        }
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
            Kind::File { data } => {
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
        let growth = end.saturating_sub(old);
        if self.bytes_used + growth > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let inode = self.inode_mut(ino)?;
        let Kind::File { data } = &mut inode.kind else { return Err(errno::ISDIR) };
        if end as usize > data.len() {
            data.resize(end as usize, 0);
        }
        data[offset as usize..end as usize].copy_from_slice(bytes);
        inode.mtime = now;
        self.bytes_used += growth;
        self.ops += 1;
        Ok(bytes.len())
    }

    pub fn set_size(&mut self, ino: Ino, size: u64, now: VTime) -> Result<(), Errno> {
        let old = self.inode(ino)?.size();
        if size > old && self.bytes_used + (size - old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let inode = self.inode_mut(ino)?;
        let Kind::File { data } = &mut inode.kind else { return Err(errno::ISDIR) };
        data.resize(size as usize, 0);
        inode.mtime = now;
        self.bytes_used = self.bytes_used - old + size;
        self.ops += 1;
        Ok(())
    }

    pub fn sync(&mut self, ino: Ino) -> Result<(), Errno> {
        self.inode(ino)?;
        self.ops += 1;
        Ok(())
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

    #[test]
    fn files_and_directories() {
        let mut d = Disk::new();
        let t = VTime(1);
        let dir = d.mkdir(ROOT, "data", t).unwrap();
        let f = d.create_file(dir, "log", t).unwrap();
        d.write_at(f, 0, b"hello", t).unwrap();
        d.write_at(f, 3, b"p!", t).unwrap();
        let mut buf = [0u8; 16];
        let n = d.read_at(f, 0, &mut buf).unwrap();
        assert_eq!(&buf[..n], b"help!");
        assert_eq!(d.lookup(ROOT, "data/log").unwrap(), f);
        assert_eq!(d.lookup(ROOT, "data/../data/./log").unwrap(), f);
        assert_eq!(d.lookup(ROOT, "../../data/log").unwrap(), f, ".. stops at the root");
        assert_eq!(d.create_file(dir, "log", t), Err(errno::EXIST));
        assert_eq!(d.rmdir(ROOT, "data", t), Err(errno::NOTEMPTY));
        d.rename(dir, "log", ROOT, "moved", t).unwrap();
        assert_eq!(d.lookup(ROOT, "data/log"), Err(errno::NOENT));
        assert_eq!(d.lookup(ROOT, "moved").unwrap(), f);
        d.rmdir(ROOT, "data", t).unwrap();
        let names: Vec<String> = d.list(ROOT).unwrap().into_iter().map(|e| e.0).collect();
        assert_eq!(names, [".", "..", "moved"]);
        d.unlink(ROOT, "moved", t).unwrap();
        assert_eq!(d.bytes_used, 0);
    }

    #[test]
    fn rename_refuses_to_move_a_dir_into_itself() {
        let mut d = Disk::new();
        let a = d.mkdir(ROOT, "a", VTime(0)).unwrap();
        d.mkdir(a, "b", VTime(0)).unwrap();
        let b = d.lookup(ROOT, "a/b").unwrap();
        assert_eq!(d.rename(ROOT, "a", b, "a", VTime(0)), Err(errno::INVAL));
    }
}
