//! The namespace: inodes, folders and their names, paths (lookups and the
//! path of an inode), creates, renames, unlinks, and the orphans a name
//! change leaves (inodes no name reaches, freed once nothing holds them).
//! There are no hard links or symlinks, so every inode has one name, kept
//! on the inode (`parent`, `name`) for paths in the trace.
use super::{Disk, FileState, PATH_DEPTH_MAX, INODES_MAX, NAME_BYTES_MAX};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

pub type Ino = u64;
pub const ROOT: Ino = 1;
/// The `parent` of an inode no name reaches any more (unlinked, still open).
pub const UNLINKED: Ino = 0;

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

impl Disk {
    pub(super) fn entries(&self, dir: Ino) -> Result<&BTreeMap<String, Ino>, Errno> {
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

    pub(super) fn alloc(&mut self, kind: Kind, parent: Ino, name: &str, now: VTime) -> Result<Ino, Errno> {
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
        self.room_for_inode(now)?;
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
        self.room_for_inode(now)?;
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
                self.account(f.usage(), Default::default());
            }
        }
    }

    /// Inodes kept for open descriptors or durable names only (for tests).
    pub fn orphans(&self) -> usize {
        self.orphans.len()
    }
}
