//! Space: what a disk's files and folders hold against its capacity
//! (`disk.capacity`), and the free space a `disk_full` fault takes away.
//!
//! A file holds its footprint (`FileState::footprint`): the longer of its
//! cache and its durable image, in whole 4 KiB blocks (the disk has no
//! holes, so a file's length is what it holds). Every file and folder but
//! the root also holds `INODE_BYTES`. Space is allocated by the block: an
//! append inside a file's last block needs no room, and a short write ends
//! at a block boundary, as xfs's do, and ext4's for writes of many pages
//! (checked on loop-mounted file systems: docs/disk.md). Space comes back when a removal or a truncate is
//! durable (an unlinked file is freed once no durable name reaches it and
//! nothing holds it open, `names::collect_orphans`), as a real file system
//! reuses freed blocks only after the commit that freed them.
//!
//! What would pass the room fails with ENOSPC, as Linux does: a write
//! writes what fits and returns the short count (`data::write_at`), and a
//! truncate up, a create or a mkdir fails whole. Before refusing, a file
//! system frees what it can: ext4 (`ext4_should_retry_alloc`), xfs (busy
//! extents) and btrfs force a commit and try again, so space an unlink or a
//! truncate freed is never refused for want of a commit (`reclaim`).
use super::{Disk, Ino, Kind, DISK_BYTES_MAX};
use crate::errno::{self, Errno};
use crate::vtime::VTime;

/// Files hold space in blocks of this size (ext4's and xfs's default).
pub const BLOCK_BYTES: u64 = 4096;

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
    /// write: all of them, unless the file would need more blocks than the
    /// room holds; then up to the last block that fits. Only blocks past the
    /// file's footprint take room: rewriting what it holds, or appending
    /// inside its last block, needs none, even on a full disk.
    pub(super) fn fits(&self, ino: Ino, offset: u64, len: u64, now: VTime) -> Result<u64, Errno> {
        // Every write asks: an unbounded disk answers before any lookup.
        let Some(room) = self.room(now) else { return Ok(len) };
        let footprint = match &self.inode(ino)?.kind {
            Kind::File(f) => f.footprint(),
            Kind::Dir { .. } => return Err(errno::ISDIR),
        };
        let end = offset.saturating_add(len);
        let needed = end.div_ceil(BLOCK_BYTES).saturating_mul(BLOCK_BYTES).saturating_sub(footprint);
        if needed <= room {
            return Ok(len);
        }
        let fit_end = footprint + room / BLOCK_BYTES * BLOCK_BYTES;
        Ok(fit_end.saturating_sub(offset).min(len))
    }

    /// What a write of `len` bytes at `offset` of `ino`, or (`ino` None) a
    /// create or mkdir, would be refused now for want of room.
    pub fn short_of_room(&self, ino: Option<Ino>, offset: u64, len: u64, now: VTime) -> bool {
        match ino {
            Some(ino) => self.fits(ino, offset, len, now).is_ok_and(|n| n < len),
            None => self.room_for_inode(now).is_err(),
        }
    }

    /// Frees what removals and shrinks not yet durable hold, as a file system
    /// does before it answers ENOSPC: a journaled model commits (every name
    /// change and size becomes durable, ordered data first, as any commit);
    /// `posix`, which may make anything durable at any moment, makes durable
    /// the unlinks (a name gone from its folder) and the shrinks only. A
    /// file replaced by a rename keeps its space until the folder's fsync
    /// there, since the rename cannot become durable without the new file's
    /// name. `held`: inodes the node still holds open. Whether anything was
    /// pending.
    pub fn reclaim(&mut self, now: VTime, held: impl Fn(Ino) -> bool) -> bool {
        // Nothing pending, nothing to commit: ext4 forces a commit only when
        // frees are pending (`s_mb_free_pending`). Footprints are whole
        // blocks, so a shrink is pending where the durable image is longer
        // than the cache, not where the totals differ.
        let shrinks = self.inodes.values().any(|i| matches!(&i.kind, Kind::File(f) if f.image.len() > f.data.len() as u64));
        if self.orphans.is_empty() && !shrinks {
            return false;
        }
        if self.model.commits() {
            self.commit(now);
        } else {
            let (orphans, sector) = (&self.orphans, self.sector_bytes);
            for inode in self.inodes.values_mut() {
                match &mut inode.kind {
                    Kind::Dir { entries, durable_entries } => durable_entries.retain(|name, ino| !orphans.contains(ino) || entries.contains_key(name)),
                    Kind::File(f) if f.image.len() > f.data.len() as u64 => {
                        f.image.resize(&f.data, f.data.len() as u64, sector, f.zeros_from, |_| false);
                        f.sizes_since.clear();
                    }
                    Kind::File(_) => {}
                }
            }
            self.recount_all();
            self.note_orphans_may_go();
        }
        self.collect_orphans(held);
        true
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
    fn a_write_that_partly_fits_is_short_at_a_block_boundary_and_the_next_fails() {
        for model in [FsModel::Ext4, FsModel::Posix, FsModel::Xfs, FsModel::Btrfs] {
            // Room for 3 blocks once the file's inode is counted.
            let (mut d, f) = disk(model, 4 * BLOCK_BYTES);
            assert_eq!(d.used_bytes(), INODE_BYTES);
            assert_eq!(d.write_at(f, 0, &vec![7; 10_000], T), Ok(10_000));
            assert_eq!(d.used_bytes(), 3 * BLOCK_BYTES + INODE_BYTES, "{model:?}: whole blocks");
            assert_eq!(d.write_at(f, 10_000, &vec![8; 3000], T), Ok(12_288 - 10_000), "{model:?}: what fits in the last block is written");
            let (writes, size) = (d.writes, d.inode(f).unwrap().size());
            assert_eq!(d.write_at(f, size, b"x", T), Err(errno::NOSPC), "{model:?}");
            assert_eq!((d.writes, d.inode(f).unwrap().size()), (writes + 1, size), "{model:?}: refused, it changed nothing but still counts as a write");
            // Rewriting what the file holds needs no room.
            assert_eq!(d.write_at(f, 0, &[9; 100], T), Ok(100));
            assert_eq!(d.set_size(f, size + 1, T), Err(errno::NOSPC), "{model:?}: a truncate up fails whole");
            assert_eq!(d.space(T), Space { total: 4 * BLOCK_BYTES, free: BLOCK_BYTES - INODE_BYTES });
            assert_eq!(d.create_file(ROOT, "other", T).map(|_| ()), Ok(()), "{model:?}: an inode fits in what is left");
            d.create_file(ROOT, "more", T).unwrap();
            let big = d.create_file(ROOT, "big", T).unwrap();
            assert_eq!(d.write_at(big, 0, b"y", T), Err(errno::NOSPC), "{model:?}: no block left for a new file's first byte");
        }
    }

    #[test]
    fn an_append_inside_the_last_block_needs_no_room() {
        let (mut d, f) = disk(FsModel::Ext4, 2 * BLOCK_BYTES);
        d.write_at(f, 0, &[1; 100], T).unwrap();
        d.full_until = VTime(10);
        assert_eq!(d.write_at(f, 100, &[2; 5000], T), Ok(3996), "a fill-up leaves the last block's slack");
    }

    #[test]
    fn freed_space_comes_back_once_the_change_is_durable() {
        // posix: an unlink is durable at the folder's fsync, a truncate at the file's.
        let (mut d, f) = disk(FsModel::Posix, 4 * BLOCK_BYTES);
        d.write_at(f, 0, &[1; 6000], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.set_size(f, 1000, T).unwrap();
        assert_eq!(d.used_bytes(), 2 * BLOCK_BYTES + INODE_BYTES, "the cut is not durable yet: its blocks are still held");
        d.sync(f, false, T).unwrap();
        assert_eq!(d.used_bytes(), BLOCK_BYTES + INODE_BYTES);
        d.unlink(ROOT, "log", T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), BLOCK_BYTES + INODE_BYTES, "the unlink is not durable yet");
        d.sync(ROOT, false, T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), 0);
        // ext4: the next journal commit (any fsync) makes both durable.
        let (mut d, f) = disk(FsModel::Ext4, 4 * BLOCK_BYTES);
        let g = d.create_file(ROOT, "other", T).unwrap();
        d.write_at(f, 0, &[1; 6000], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.unlink(ROOT, "log", T).unwrap();
        d.collect_orphans(|_| false);
        assert_eq!(d.used_bytes(), 2 * BLOCK_BYTES + 2 * INODE_BYTES);
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
        assert_eq!(d.write_at(f, BLOCK_BYTES, b"d", VTime(50)), Err(errno::NOSPC));
        assert_eq!(d.write_at(f, 0, b"x", VTime(50)), Ok(1), "a rewrite needs no room");
        assert_eq!(d.create_file(ROOT, "b", VTime(99)), Err(errno::NOSPC));
        assert_eq!(d.write_at(f, BLOCK_BYTES, b"d", VTime(100)), Ok(1));
        assert_eq!(d.space(VTime(100)), Space { total: DISK_BYTES_MAX, free: DISK_BYTES_MAX - 2 * BLOCK_BYTES - INODE_BYTES });
    }

    #[test]
    fn a_refusal_first_reclaims_what_removals_and_shrinks_not_yet_durable_hold() {
        // ext4: an unlink not yet committed; reclaim commits, as
        // ext4_should_retry_alloc does (a loop-mounted ext4 writes 1 MiB
        // right after unlinking the file that filled it, with no sync).
        let (mut d, f) = disk(FsModel::Ext4, 4 * BLOCK_BYTES);
        d.write_at(f, 0, &[1; 3 * BLOCK_BYTES as usize], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.unlink(ROOT, "log", T).unwrap();
        let g = d.create_file(ROOT, "next", T).unwrap();
        assert!(d.short_of_room(Some(g), 0, 100, T));
        assert!(d.reclaim(T, |_| false));
        assert!(!d.short_of_room(Some(g), 0, 100, T));
        assert!(!d.reclaim(T, |_| false), "nothing left to reclaim");
        // A file not a whole number of blocks long is nothing pending: no commit.
        d.write_at(g, 0, &[2; 100], T).unwrap();
        let commits_before = d.last_commit;
        assert!(!d.reclaim(VTime(7), |_| false), "a partial last block is not a pending free");
        assert_eq!(d.last_commit, commits_before);
        // An unlinked file still open keeps its blocks, as on Linux.
        let (mut d, f) = disk(FsModel::Ext4, 4 * BLOCK_BYTES);
        d.write_at(f, 0, &[1; 3 * BLOCK_BYTES as usize], T).unwrap();
        d.unlink(ROOT, "log", T).unwrap();
        d.reclaim(T, |ino| ino == f);
        assert_eq!(d.used_bytes(), 3 * BLOCK_BYTES + INODE_BYTES);
        // posix: the unlink and the shrink become durable, and only those.
        let (mut d, f) = disk(FsModel::Posix, 8 * BLOCK_BYTES);
        let kept = d.create_file(ROOT, "kept", T).unwrap();
        d.write_at(f, 0, &[1; 2 * BLOCK_BYTES as usize], T).unwrap();
        d.write_at(kept, 0, &[1; 3 * BLOCK_BYTES as usize], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(kept, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.set_size(kept, 10, T).unwrap();
        d.unlink(ROOT, "log", T).unwrap();
        assert!(d.reclaim(T, |_| false));
        assert_eq!(d.used_bytes(), BLOCK_BYTES + INODE_BYTES);
        // Every choice a crash could make keeps the unlink and the cut.
        for pick in 0..4 {
            let mut c = d.clone();
            c.crash(false, |n| pick % n.max(1));
            assert_eq!(c.lookup(ROOT, "log"), Err(errno::NOENT), "the unlink is durable");
            assert_eq!(c.inode(c.lookup(ROOT, "kept").unwrap()).unwrap().size(), 10, "the cut is durable");
        }
    }
}
