//! Durability: what makes the cache durable. fsync (a file's data and
//! size, a folder's names, per the model), the write-out of dirty sectors
//! (misdirected ones land elsewhere), and the commit of a journal, log or
//! transaction (ext4, xfs, btrfs) with what each model flushes before it.
//! What a crash keeps of the rest is `crash`'s.
use super::model::{FsModel, EXT4_BLOCK_BYTES};
use super::{Disk, FileState, Ino, Kind, Mutation};
use crate::errno::{self, Errno};
use crate::vtime::VTime;

impl Disk {
    /// Writes a file's dirty sectors to the durable image (misdirected ones
    /// where they land) and marks them clean. In sector order, as a disk
    /// would: a misdirected write may land on a sector written in place.
    fn write_out(f: &mut FileState, sector: usize) {
        let sector = sector as u64;
        let dirty = std::mem::take(&mut f.dirty);
        // Sectors written whole at their own place need no check on growth.
        f.image.resize(&f.data, f.data.len() as u64, sector, f.zeros_from, |s| dirty.contains(s) && !f.misdirected.contains_key(&s));
        let past = (f.data.len() as u64).div_ceil(sector);
        for (a, b) in dirty.runs_in(0, past) {
            let mut s = a;
            while s < b {
                // In place, the image reads as the cache there: up to the
                // next misdirected sector, all at once.
                let to = f.misdirected.range(s..b).next().map_or(b, |(&m, _)| m);
                if f.image.len() == f.data.len() as u64 {
                    f.image.written_through(s, to);
                } else {
                    // A misdirected write lengthened the image past the
                    // cache: the last sector keeps its bytes past the end.
                    for t in s..to {
                        let start = t * sector;
                        f.image.write(&f.data, start, (start + sector).min(f.data.len() as u64), start, sector);
                    }
                }
                if to == b {
                    break;
                }
                let start = to * sector;
                let end = (start + sector).min(f.data.len() as u64);
                let dest = f.misdirected.remove(&to).map_or(start, |d| d * sector);
                f.image.write(&f.data, start, end, dest, sector);
                s = to + 1;
            }
        }
    }

    /// Writes the dirty sectors of the bytes `[lo, hi)` to the durable image
    /// at their own places, and marks them clean (ext4's ordered data of
    /// one block at a commit).
    fn write_out_range(f: &mut FileState, sector: usize, lo: u64, hi: u64) {
        let sector = sector as u64;
        let hi = hi.min(f.data.len() as u64).min(f.image.len());
        let chosen: Vec<u64> = f.dirty.iter_in(lo / sector, hi.div_ceil(sector)).filter(|s| !f.misdirected.contains_key(s)).collect();
        for s in chosen {
            let start = s * sector;
            let whole = (start + sector).min(f.data.len() as u64);
            // Past the size on disk nothing is written: such a sector stays
            // dirty for the write-out that makes the size durable.
            let end = whole.min(f.image.len());
            f.image.write(&f.data, start, end, start, sector);
            if end == whole {
                f.dirty.remove(s);
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
                let before = f.usage();
                Disk::write_out(f, sector);
                // fsync makes the file's own metadata durable: its size too.
                f.pending_size = None;
                f.truncated_to = None;
                f.sizes_since.clear();
                let after = f.usage();
                self.account(before, after);
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

    /// A commit (ext4's journal, xfs's log, btrfs's transaction): files
    /// flagged for a write-out write their data first (ordered mode), then
    /// every name change and size so far becomes durable at once.
    pub(super) fn commit(&mut self, now: VTime) {
        debug_assert!(self.model.commits(), "{} has no commit", self.model.name());
        let (sector, model) = (self.sector_bytes as usize, self.model);
        for inode in self.inodes.values_mut() {
            match &mut inode.kind {
                Kind::File(f) => {
                    // A truncate commits before the size that followed it:
                    // cut down and grown back, the file reads zeros past the
                    // cut, not what its freed blocks held (etcd's ZeroToEnd
                    // on the real kernel; litmus zero_to_end_write_across).
                    if let Some(cut) = f.truncated_to.filter(|&t| t < f.image.len()) {
                        f.image.resize(&f.data, cut, sector as u64, f.zeros_from, |_| false);
                    }
                    if let Some(size) = f.pending_size.take() {
                        f.image.resize(&f.data, size, sector as u64, f.zeros_from, |_| false);
                    }
                    // ext4 (data=ordered) zeroes the block a truncate cuts
                    // inside and makes it ordered data: the commit writes
                    // that block as the cache holds it, whatever was written
                    // there since (`ext4_block_truncate_page`).
                    if let Some(cut) = f.truncated_to.filter(|t| model == FsModel::Ext4 && t % EXT4_BLOCK_BYTES != 0) {
                        let block = cut / EXT4_BLOCK_BYTES * EXT4_BLOCK_BYTES;
                        Disk::write_out_range(f, sector, block, block + EXT4_BLOCK_BYTES);
                    }
                    if std::mem::take(&mut f.flush_on_commit) {
                        Disk::write_out(f, sector);
                    }
                    f.truncated_to_zero = false;
                    f.truncated_to = None;
                }
                Kind::Dir { entries, durable_entries } => *durable_entries = entries.clone(),
            }
        }
        self.recount_all();
        self.note_orphans_may_go();
        self.last_commit = now;
    }

    /// The periodic commit, when its interval has passed. Called before each
    /// host call of the disk's node and before a crash, so every operation
    /// made before the commit moment is in it.
    pub fn tick(&mut self, now: VTime) {
        if self.model.commits() && self.commit_interval_ns > 0 && now.nanos() >= self.last_commit.nanos().saturating_add(self.commit_interval_ns) {
            self.commit(now);
        }
    }

    /// The file was closed: a replace-via-truncate's data is written out
    /// before the next commit (ext4's auto_da_alloc, xfs).
    pub fn closed(&mut self, ino: Ino) {
        if !self.model.flushes_on_close_after_truncate() || self.mutation == Some(Mutation::NoAutoDaAlloc) {
            return;
        }
        if let Ok(f) = self.file_mut(ino) {
            if f.truncated_to_zero && !f.dirty.is_empty() {
                f.flush_on_commit = true;
            }
        }
    }

    /// A file was renamed over an existing file: ext4 writes its data out
    /// before the commit that makes the rename durable (auto_da_alloc).
    pub(super) fn replaced_via_rename(&mut self, ino: Ino) {
        if !self.model.flushes_on_rename_over() || self.mutation == Some(Mutation::NoAutoDaAlloc) {
            return;
        }
        if let Ok(f) = self.file_mut(ino) {
            f.flush_on_commit = true;
        }
    }

    /// btrfs: an fsync of `ino` makes its name durable where it is now (and
    /// drops a durable name it had elsewhere), and the name of every folder
    /// on its path.
    fn log_names(&mut self, ino: Ino) {
        let mut links = Vec::new();
        let mut cur = ino;
        for _ in 0..=super::PATH_DEPTH_MAX * 4 {
            if cur == super::ROOT {
                break;
            }
            let Ok(i) = self.inode(cur) else { return };
            if i.parent == super::UNLINKED {
                return;
            }
            links.push((i.parent, i.name.clone(), cur));
            cur = i.parent;
        }
        for (dir, name, child) in links {
            // The child's old durable name goes with the new one (a rename).
            for inode in self.inodes.values_mut() {
                if let Kind::Dir { durable_entries, .. } = &mut inode.kind {
                    durable_entries.retain(|_, i| *i != child);
                }
            }
            if let Ok(Kind::Dir { durable_entries, .. }) = self.inode_mut(dir).map(|i| &mut i.kind) {
                durable_entries.insert(name, child);
            }
        }
        self.note_orphans_may_go();
    }
}
