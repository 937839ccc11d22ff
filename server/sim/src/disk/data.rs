//! The data path: reads and writes of the cache, truncates, and fsync,
//! which makes data (and, per the model, names and sizes) durable.
use super::{grow_to, model::FsModel, Disk, FileState, Ino, Kind, Mutation, DISK_BYTES_MAX};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::BTreeSet;

impl Disk {
    /// Sectors `[first, last]` a byte range covers (`None` when empty).
    pub fn sectors_of(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        (len > 0).then(|| (offset / self.sector_bytes, (offset + len - 1) / self.sector_bytes))
    }

    /// Reads from the cache. A read that covers a bad sector fails with EIO.
    pub fn read_at(&mut self, ino: Ino, offset: u64, buf: &mut [u8]) -> Result<usize, Errno> {
        self.ops += 1;
        self.reads += 1;
        let sector = self.sector_bytes;
        match &self.inode(ino)?.kind {
            Kind::File(f) => {
                if offset >= f.data.len() as u64 {
                    return Ok(0);
                }
                let start = offset as usize;
                let n = buf.len().min(f.data.len() - start);
                if n > 0 && f.bad.range(offset / sector..=(offset + n as u64 - 1) / sector).next().is_some() {
                    return Err(errno::IO);
                }
                buf[..n].copy_from_slice(&f.data[start..start + n]);
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
        let model = self.model;
        let inode = self.inodes.get_mut(&ino).ok_or(errno::NOENT)?;
        let Kind::File(f) = &mut inode.kind else { return Err(errno::ISDIR) };
        let held_before = f.held_bytes();
        f.image.preserve(&f.data, offset, end, sector);
        if end as usize > f.data.len() {
            // Growing zero-fills from the old end.
            let old = f.data.len() as u64;
            Disk::mark_zeroed(f, old, offset, sector);
            grow_to(&mut f.data, end as usize);
            Disk::grew(f, model, end);
        }
        f.data[offset as usize..end as usize].copy_from_slice(bytes);
        if !bytes.is_empty() {
            for s in (offset / sector)..=((end - 1) / sector) {
                f.dirty.insert(s);
                // A rewrite remaps a bad sector, and goes where it should.
                f.bad.remove(&s);
                f.misdirected.remove(&s);
            }
        }
        inode.mtime = now;
        let held_after = f.held_bytes();
        self.account(held_before, held_after, old, end.max(old));
        self.ops += 1;
        self.writes += 1;
        Ok(bytes.len())
    }

    pub fn set_size(&mut self, ino: Ino, size: u64, now: VTime) -> Result<(), Errno> {
        let old = self.inode(ino)?.size();
        if size > old && self.bytes_used() + (size - old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let sector = self.sector_bytes;
        let (model, journaled) = (self.model, self.model.commits());
        let inode = self.inodes.get_mut(&ino).ok_or(errno::NOENT)?;
        let Kind::File(f) = &mut inode.kind else { return Err(errno::ISDIR) };
        let held_before = f.held_bytes();
        let (lo, hi) = (old.min(size), old.max(size));
        f.image.preserve(&f.data, lo, hi, sector);
        Disk::mark_zeroed(f, lo, hi, sector);
        if size > old {
            grow_to(&mut f.data, size as usize);
        } else {
            f.data.truncate(size as usize);
            // A file cut to a fraction of its size gives the memory back.
            if f.data.capacity() > 2 * f.data.len() + (1 << 20) {
                f.data.shrink_to(f.data.len() + f.data.len() / 8);
            }
        }
        if journaled {
            // A truncate is metadata: the journal carries it.
            f.pending_size = Some(size);
            f.truncated_to_zero |= size == 0;
            if size < old {
                f.truncated_to = Some(f.truncated_to.map_or(size, |t| t.min(size)));
            }
        }
        if model.uncertain() {
            f.note_size(size);
        }
        inode.mtime = now;
        let held_after = f.held_bytes();
        self.account(held_before, held_after, old, size);
        self.ops += 1;
        Ok(())
    }

    /// The cache grew to `end` by a write: what the size on disk does.
    fn grew(f: &mut FileState, model: FsModel, end: u64) {
        if model.uncertain() {
            f.note_size(end);
        }
        if model.size_follows_tail_append() {
            // ext4 allocates whole blocks: a write that ends inside a block
            // the file already has on disk (not one a truncate will free)
            // sets i_disksize now, and the next commit writes it, whether or
            // not the data ever is.
            let on_disk = f.pending_size.map_or(f.image.len(), |p| p.min(f.image.len()));
            let allocated = on_disk.div_ceil(super::model::EXT4_BLOCK_BYTES) * super::model::EXT4_BLOCK_BYTES;
            if end <= allocated {
                f.pending_size = Some(f.pending_size.unwrap_or(f.image.len()).max(end));
            }
        }
    }

    /// The bytes `[lo, hi)` of the cache became zeros (a truncate, or a
    /// write past the end): mark dirty what the durable image must learn.
    /// That is the sector holding `lo` and the sectors the durable image has
    /// data in; sectors past the durable end need nothing, since making the
    /// size durable zero-fills them (a 64 MiB preallocation then marks one
    /// sector, not 131072).
    fn mark_zeroed(f: &mut FileState, lo: u64, hi: u64, sector: u64) {
        if hi <= lo {
            return;
        }
        f.dirty.insert(lo / sector);
        let durable_end = f.image.len().min(hi);
        for s in (lo / sector)..durable_end.div_ceil(sector) {
            f.dirty.insert(s);
        }
    }

    /// Writes a file's dirty sectors to the durable image (misdirected ones
    /// where they land) and marks them clean.
    pub(super) fn write_out(f: &mut FileState, sector: usize) {
        let sector = sector as u64;
        let dirty = std::mem::take(&mut f.dirty);
        // Sectors written whole at their own place need no check on growth.
        let in_place: BTreeSet<u64> = dirty.iter().copied().filter(|s| !f.misdirected.contains_key(s)).collect();
        f.image.resize(&f.data, f.data.len() as u64, sector, &in_place);
        for s in dirty {
            let start = s * sector;
            if start >= f.data.len() as u64 {
                continue;
            }
            let end = (start + sector).min(f.data.len() as u64);
            let dest = f.misdirected.remove(&s).map_or(start, |to| to * sector);
            f.image.write(&f.data, start, end, dest, sector);
        }
    }

    /// Writes the dirty sectors of the bytes `[lo, hi)` to the durable image
    /// at their own places, and marks them clean (ext4's ordered data of
    /// one block at a commit).
    pub(super) fn write_out_range(f: &mut FileState, sector: usize, lo: u64, hi: u64) {
        let sector = sector as u64;
        let hi = hi.min(f.data.len() as u64).min(f.image.len());
        let chosen: Vec<u64> = f.dirty.range(lo / sector..hi.div_ceil(sector)).copied().filter(|s| !f.misdirected.contains_key(s)).collect();
        for s in chosen {
            let start = s * sector;
            let whole = (start + sector).min(f.data.len() as u64);
            // Past the size on disk nothing is written: such a sector stays
            // dirty for the write-out that makes the size durable.
            let end = whole.min(f.image.len());
            f.image.write(&f.data, start, end, start, sector);
            if end == whole {
                f.dirty.remove(&s);
            }
        }
    }

    /// fsync: makes a file's data and size durable, or a folder's names
    /// (posix, btrfs); btrfs also logs the file's own names; under a journal
    /// (ext4, xfs) any successful fsync also commits it.
    /// With `fail` the pages are marked clean unwritten and EIO returned.
    pub fn sync(&mut self, ino: Ino, fail: bool, now: VTime) -> Result<(), Errno> {
        self.ops += 1;
        self.syncs += 1;
        let (mutation, model) = (self.mutation, self.model);
        let sector = self.sector_bytes as usize;
        match &mut self.inode_mut(ino)?.kind {
            Kind::File(f) => {
                if fail {
                    f.dirty.clear();
                    f.misdirected.clear();
                    return Err(errno::IO);
                }
                if mutation == Some(Mutation::FsyncNoop) {
                    return Ok(());
                }
                let (held_before, size) = (f.held_bytes(), f.data.len() as u64);
                Disk::write_out(f, sector);
                // fsync makes the file's own metadata durable: its size too.
                f.pending_size = None;
                f.truncated_to = None;
                f.sizes_since.clear();
                let held_after = f.held_bytes();
                self.account(held_before, held_after, size, size);
                if model.fsync_logs_names() {
                    self.log_names(ino);
                }
            }
            Kind::Dir { entries, durable_entries } => {
                if fail {
                    return Err(errno::IO);
                }
                if model.dir_fsync_names() && mutation != Some(Mutation::DirFsyncIgnored) {
                    *durable_entries = entries.clone();
                    self.orphans_dirty |= !self.orphans.is_empty();
                    if model.fsync_logs_names() {
                        // btrfs logs a folder's own name with its entries.
                        self.log_names(ino);
                    }
                }
            }
        }
        if model.journal() && mutation != Some(Mutation::JournalOnlyOnTimer) {
            self.commit(now);
        }
        Ok(())
    }

    /// Sectors of a file not yet durable (for tests and the timeline).
    pub fn dirty_sectors(&self, ino: Ino) -> usize {
        match self.inodes.get(&ino).map(|i| &i.kind) {
            Some(Kind::File(f)) => f.dirty.len(),
            _ => 0,
        }
    }
}
