//! Space: what a disk's files and folders hold against its capacity
//! (`disk.capacity`), and the free space a `disk_full` fault takes away.
//!
//! A file holds its footprint (`FileState::footprint`): the longer of its
//! cache and its durable image, byte for byte (the disk has no holes, so a
//! file's length is what it holds). Every file and folder but the root also
//! holds `INODE_BYTES`. Space comes back when a removal or a truncate is
//! durable (an unlinked file is freed once no durable name reaches it and
//! nothing holds it open, `names::collect_orphans`), as a real file system
//! reuses freed blocks only after the commit that freed them.
//!
//! What would pass the room fails with ENOSPC, as Linux does: a write
//! writes what fits and returns the short count (`data::write_at`), and a
//! truncate up, a create or a mkdir fails whole.
use super::{Disk, Ino, Kind, DISK_BYTES_MAX};
use crate::errno::{self, Errno};
use crate::vtime::VTime;

/// What each file and folder holds besides its data: its inode and entry
/// (ext4's default inode size).
pub const INODE_BYTES: u64 = 256;

/// A disk's size and free space, as `statfs` reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Space {
    pub total: u64,
    pub free: u64,
}

impl Disk {
    /// Bytes the disk's files and folders hold (what `capacity` bounds).
    pub fn used_bytes(&self) -> u64 {
        self.footprint_total + INODE_BYTES * (self.inodes.len() as u64 - 1)
    }

    /// Whether a `disk_full` fault holds the free space at 0 now.
    pub fn full_at(&self, now: VTime) -> bool {
        now < self.full_until
    }

    /// Bytes that may still be allocated now; `None`: no capacity is set and
    /// no fill-up holds (only `DISK_BYTES_MAX` bounds the disk).
    pub fn room(&self, now: VTime) -> Option<u64> {
        if self.full_at(now) {
            return Some(0);
        }
        self.capacity.map(|c| c.saturating_sub(self.used_bytes()))
    }

    /// The disk's size and free space, for `statfs`.
    pub fn space(&self, now: VTime) -> Space {
        let total = self.capacity.unwrap_or(DISK_BYTES_MAX);
        let free = self.room(now).unwrap_or_else(|| total.saturating_sub(self.used_bytes()));
        Space { total, free }
    }

    /// How many of the `len` bytes a write at `offset` of file `ino` may
    /// write: all of them, unless the file would grow past the room. Only
    /// growth past the file's footprint takes space: rewriting what it holds
    /// needs none, even on a full disk.
    pub(super) fn fits(&self, ino: Ino, offset: u64, len: u64, now: VTime) -> Result<u64, Errno> {
        let footprint = match &self.inode(ino)?.kind {
            Kind::File(f) => f.footprint(),
            Kind::Dir { .. } => return Err(errno::ISDIR),
        };
        let end = offset.saturating_add(len);
        match self.room(now) {
            Some(room) if end.saturating_sub(footprint) > room => Ok((footprint + room).saturating_sub(offset).min(len)),
            _ => Ok(len),
        }
    }

    /// A create or mkdir: ENOSPC unless the disk has room for one more inode.
    pub(super) fn room_for_inode(&self, now: VTime) -> Result<(), Errno> {
        match self.room(now) {
            Some(room) if room < INODE_BYTES => Err(errno::NOSPC),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FsModel, ROOT};
    use super::*;

    const T: VTime = VTime(1);

    /// A disk of `capacity` bytes under `model`, with one file.
    fn disk(model: FsModel, capacity: u64) -> (Disk, Ino) {
        let mut d = Disk::new(512, model);
        d.capacity = Some(capacity);
        let f = d.create_file(ROOT, "log", T).unwrap();
        (d, f)
    }

    #[test]
    fn a_write_that_partly_fits_is_short_and_the_next_fails() {
        for model in [FsModel::Ext4, FsModel::Posix, FsModel::Xfs, FsModel::Btrfs] {
            let (mut d, f) = disk(model, 4096);
            assert_eq!(d.used_bytes(), INODE_BYTES);
            let room = 4096 - INODE_BYTES;
            assert_eq!(d.write_at(f, 0, &vec![7; 3000], T), Ok(3000));
            assert_eq!(d.write_at(f, 3000, &vec![8; 3000], T), Ok(room as usize - 3000), "{model:?}: what fits is written");
            let (writes, size) = (d.writes, d.inode(f).unwrap().size());
            assert_eq!(d.write_at(f, size, b"x", T), Err(errno::NOSPC), "{model:?}");
            assert_eq!((d.writes, d.inode(f).unwrap().size()), (writes + 1, size), "{model:?}: refused, it changed nothing but still counts as a write");
            // Rewriting what the file holds needs no room.
            assert_eq!(d.write_at(f, 0, &[9; 100], T), Ok(100));
            assert_eq!(d.set_size(f, size + 1, T), Err(errno::NOSPC), "{model:?}: a truncate up fails whole");
            assert_eq!(d.create_file(ROOT, "other", T), Err(errno::NOSPC));
            assert_eq!(d.mkdir(ROOT, "dir", T), Err(errno::NOSPC));
            assert_eq!(d.space(T), Space { total: 4096, free: 0 });
        }
    }

    #[test]
    fn freed_space_comes_back_once_the_change_is_durable() {
        // posix: an unlink is durable at the folder's fsync, a truncate at the file's.
        let (mut d, f) = disk(FsModel::Posix, 8192);
        d.write_at(f, 0, &[1; 6000], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.set_size(f, 1000, T).unwrap();
        assert_eq!(d.used_bytes(), 6000 + INODE_BYTES, "the cut is not durable yet: its blocks are still held");
        d.sync(f, false, T).unwrap();
        assert_eq!(d.used_bytes(), 1000 + INODE_BYTES);
        d.unlink(ROOT, "log", T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), 1000 + INODE_BYTES, "the unlink is not durable yet");
        d.sync(ROOT, false, T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), 0);
        // ext4: the next journal commit (any fsync) makes both durable.
        let (mut d, f) = disk(FsModel::Ext4, 8192);
        let g = d.create_file(ROOT, "other", T).unwrap();
        d.write_at(f, 0, &[1; 6000], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.unlink(ROOT, "log", T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), 6000 + 2 * INODE_BYTES);
        d.sync(g, false, T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), INODE_BYTES);
    }

    #[test]
    fn a_fill_up_holds_the_free_space_at_zero_until_it_ends() {
        let mut d = Disk::new(512, FsModel::Ext4);
        let f = d.create_file(ROOT, "log", T).unwrap();
        d.write_at(f, 0, b"abc", T).unwrap();
        d.full_until = VTime(100);
        assert_eq!(d.space(VTime(50)).free, 0);
        assert_eq!(d.write_at(f, 3, b"d", VTime(50)), Err(errno::NOSPC));
        assert_eq!(d.write_at(f, 0, b"x", VTime(50)), Ok(1), "a rewrite needs no room");
        assert_eq!(d.create_file(ROOT, "b", VTime(99)), Err(errno::NOSPC));
        assert_eq!(d.write_at(f, 3, b"d", VTime(100)), Ok(1));
        assert_eq!(d.space(VTime(100)), Space { total: DISK_BYTES_MAX, free: DISK_BYTES_MAX - 4 - INODE_BYTES });
    }
}
