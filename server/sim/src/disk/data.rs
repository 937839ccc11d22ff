//! The data path: reads and writes of the cache, truncates, and fsync,
//! which makes data (and, per the model, names and sizes) durable.
use super::{grow_to, model::FsModel, Disk, FileState, Ino, Kind, Mutation, DISK_BYTES_MAX};
use crate::vtime::VTime;
use crate::wasi::errno::{self, Errno};
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
        let inode = self.inodes.get_mut(&ino).ok_or(errno::NOENT)?;
        let Kind::File(f) = &mut inode.kind else { return Err(errno::ISDIR) };
        let held_before = f.held_bytes();
        f.image.preserve(&f.data, offset, end, sector);
        if end as usize > f.data.len() {
            // Growing zero-fills from the old end.
            let old = f.data.len() as u64;
            Disk::mark_zeroed(f, old, offset, sector);
            grow_to(&mut f.data, end as usize);
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
        let journaled = self.model == FsModel::Ext4;
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
        }
        inode.mtime = now;
        let held_after = f.held_bytes();
        self.account(held_before, held_after, old, size);
        self.ops += 1;
        Ok(())
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

    /// fsync: makes a file's data durable, or a directory's names (posix);
    /// under ext4 any successful fsync also commits the journal.
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
                let held_after = f.held_bytes();
                self.account(held_before, held_after, size, size);
            }
            Kind::Dir { entries, durable_entries } => {
                if fail {
                    return Err(errno::IO);
                }
                if model == FsModel::Posix && mutation != Some(Mutation::DirFsyncIgnored) {
                    *durable_entries = entries.clone();
                    self.orphans_dirty |= !self.orphans.is_empty();
                }
            }
        }
        if model == FsModel::Ext4 && mutation != Some(Mutation::JournalOnlyOnTimer) {
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
