//! The data path: a file's state (its cache, durable image, dirty and bad
//! sectors, sizes not yet durable), reads and writes of the cache, and
//! truncates.
use super::{image, model::FsModel, sectors::SectorSet, Disk, Ino, Kind, DISK_BYTES_MAX};
use crate::vtime::VTime;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Debug, Clone, Default)]
pub struct FileState {
    /// What reads see: the cache.
    pub data: Vec<u8>,
    /// What survives a crash, as its difference from `data`.
    pub image: image::Image,
    /// Sectors written since the last successful or failed fsync.
    pub dirty: SectorSet,
    /// The cache reads only zeros from here to its end (it may hold zeros
    /// before it too): what a preallocation added and nothing wrote since.
    /// A truncate or a crash need not keep or compare what lies past it,
    /// so their work follows what was written, not the file's size.
    pub zeros_from: u64,
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
    /// FNV-1a of what reads see, as hex; the zeros past `zeros_from` are
    /// hashed without being read.
    pub fn content_hash(&self) -> String {
        let mut h = crate::hash::Fnv1a::new();
        let zeros = (self.zeros_from as usize).min(self.data.len());
        h.write(&self.data[..zeros]);
        h.write_zeros((self.data.len() - zeros) as u64);
        format!("{:016x}", h.value())
    }

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

    /// Bytes the file holds on the medium, in whole blocks
    /// (`space::BLOCK_BYTES`): of the longer of what reads see and what is
    /// durable, since blocks a truncate frees are free only once the
    /// truncate is durable (a journal commit reuses them no sooner).
    pub fn footprint(&self) -> u64 {
        let block = super::space::BLOCK_BYTES;
        (self.data.len() as u64).max(self.image.len()).div_ceil(block) * block
    }

    pub(crate) fn usage(&self) -> Usage {
        Usage { held: self.held_bytes(), size: self.data.len() as u64, footprint: self.footprint() }
    }
}

/// What one file (or a disk's files) uses: host memory, bytes of data, and
/// bytes on the medium (`FileState::footprint`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Usage {
    pub held: u64,
    pub size: u64,
    pub footprint: u64,
}

impl Usage {
    pub fn plus(self, o: Usage) -> Usage {
        Usage { held: self.held + o.held, size: self.size + o.size, footprint: self.footprint + o.footprint }
    }
}

/// Grows a file's cache to `len` with zeros, with room for an eighth more:
/// appends stay cheap, and the cache never holds twice what the file is
/// (a doubling `Vec` would, and the memory budget counts capacity). For a
/// write, whose bytes fill the new part at once: a reallocation moves a
/// large buffer without copying it.
fn grow_to(data: &mut Vec<u8>, len: usize) {
    if len > data.capacity() {
        let want = len.max(data.capacity() + data.capacity() / 8);
        data.reserve_exact(want - data.len());
    }
    data.resize(len, 0);
}

/// For zeros that stay zeros (a truncate up, a preallocation, a crash that
/// lengthens a file): a large extension past the capacity takes a zeroed
/// allocation (calloc: fresh pages the kernel zeroes only when touched) and
/// copies what the cache held, rather than writing every zero. A 64 MiB
/// preallocation then costs what was written before it, not 64 MiB of page
/// faults. Only when the copy is the smaller (old and new buffers are both
/// held while it runs); false when it did nothing, and the caller grows as
/// it always did.
pub(super) fn fresh_zeros(data: &mut Vec<u8>, len: usize) -> bool {
    /// Zero extensions from this size on take fresh pages.
    const FRESH_PAGES_FROM: usize = 1 << 20;
    let extension = len.saturating_sub(data.len());
    if !(len > data.capacity() && extension >= FRESH_PAGES_FROM && data.len() <= extension) {
        return false;
    }
    let want = len.max(data.capacity() + data.capacity() / 8);
    let mut grown = vec![0u8; want];
    grown[..data.len()].copy_from_slice(data);
    grown.truncate(len);
    *data = grown;
    true
}

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

    /// Writes `bytes` at `offset` of the cache. What would pass the disk's
    /// room is cut, as Linux does: a write that partly fits writes what fits
    /// and returns the short count, and one that fits nothing fails with
    /// ENOSPC, changing nothing (`space`).
    pub fn write_at(&mut self, ino: Ino, offset: u64, bytes: &[u8], now: VTime) -> Result<usize, Errno> {
        offset.checked_add(bytes.len() as u64).ok_or(errno::FBIG)?;
        let fits = self.fits(ino, offset, bytes.len() as u64, now)?;
        if fits == 0 && !bytes.is_empty() {
            // Refused, it was still a write: faults keyed by write number
            // count it, so a replay numbers writes as the run did.
            self.refused_write();
            return Err(errno::NOSPC);
        }
        let bytes = &bytes[..fits as usize];
        let end = offset + bytes.len() as u64;
        let old = self.inode(ino)?.size();
        if self.bytes_used() + end.saturating_sub(old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        let sector = self.sector_bytes;
        let model = self.model;
        let inode = self.inodes.get_mut(&ino).ok_or(errno::NOENT)?;
        let Kind::File(f) = &mut inode.kind else { return Err(errno::ISDIR) };
        let before = f.usage();
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
            let (first, past) = (offset / sector, (end - 1) / sector + 1);
            f.dirty.insert_range(first, past);
            // A rewrite remaps a bad sector, and goes where it should.
            let healed: Vec<u64> = f.bad.range(first..past).copied().collect();
            for s in healed {
                f.bad.remove(&s);
            }
            let redirected: Vec<u64> = f.misdirected.range(first..past).map(|(&s, _)| s).collect();
            for s in redirected {
                f.misdirected.remove(&s);
            }
            f.zeros_from = f.zeros_from.max(end);
        }
        debug_assert!(f.zeros_from <= f.data.len() as u64, "zeros_from inside the file");
        inode.mtime = now;
        let after = f.usage();
        self.account(before, after);
        self.ops += 1;
        self.writes += 1;
        Ok(bytes.len())
    }

    /// Sets a file's size (ftruncate, fallocate); growing it past the
    /// disk's room fails with ENOSPC and changes nothing.
    pub fn set_size(&mut self, ino: Ino, size: u64, now: VTime) -> Result<(), Errno> {
        let old = self.inode(ino)?.size();
        if size > old && self.bytes_used() + (size - old) > DISK_BYTES_MAX {
            return Err(errno::NOSPC);
        }
        if size > old && self.fits(ino, old, size - old, now)? < size - old {
            return Err(errno::NOSPC);
        }
        let sector = self.sector_bytes;
        let (model, journaled) = (self.model, self.model.commits());
        let inode = self.inodes.get_mut(&ino).ok_or(errno::NOENT)?;
        let Kind::File(f) = &mut inode.kind else { return Err(errno::ISDIR) };
        let before = f.usage();
        let (lo, hi) = (old.min(size), old.max(size));
        // Growing changes no byte the image reads from the cache (zeros past
        // its end become zeros), and neither does cutting off zeros: only the
        // cut's written part has bytes to keep.
        if size < old {
            f.image.preserve(&f.data, lo, hi.min(f.zeros_from.max(lo)), sector);
        }
        Disk::mark_zeroed(f, lo, hi, sector);
        if size > old {
            if !fresh_zeros(&mut f.data, size as usize) {
                grow_to(&mut f.data, size as usize);
            }
        } else {
            f.data.truncate(size as usize);
            f.zeros_from = f.zeros_from.min(size);
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
        debug_assert!(f.zeros_from <= f.data.len() as u64, "zeros_from inside the file");
        inode.mtime = now;
        let after = f.usage();
        self.account(before, after);
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
        f.dirty.insert_range(lo / sector, durable_end.div_ceil(sector));
    }

}
