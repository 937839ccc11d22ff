//! A medium that misbehaves: the storage faults beyond crashes and fsync
//! errors, as TigerBeetle's simulator models them.
//!
//! - a latent sector error: one sector cannot be read (EIO) until it is
//!   written again (drives remap a sector on write);
//! - a misdirected write: a write's sectors, when they are written out,
//!   land on other sectors of the file; the cache shows the right data
//!   until a crash (or a restart) reads the disk again;
//! - a lost write: the drive acknowledges a write it never persists: its
//!   sectors are clean, so fsync writes nothing for them.
//!
//! A corrupt read (bits flipped in what a read returns) changes nothing
//! stored; it is applied where the data leaves for the guest (`wasi::fd`).
//! What to hit is decided by the world (`World::disk_read`, `disk_write`),
//! drawn from the `disk` stream or taken from a schedule.
use super::{Disk, Ino};
use crate::errno::Errno;

impl Disk {
    /// Sectors the file spans.
    pub fn file_sectors(&self, ino: Ino) -> u64 {
        self.inode(ino).map(|i| i.size().div_ceil(self.sector_bytes)).unwrap_or(0)
    }

    /// Sector `sector` of the file cannot be read until it is written.
    pub fn mark_bad(&mut self, ino: Ino, sector: u64) -> Result<(), Errno> {
        self.file_mut(ino)?.bad.insert(sector);
        Ok(())
    }

    /// The dirty sectors `first..=last` will land at `to..` when written out.
    pub fn misdirect(&mut self, ino: Ino, first: u64, last: u64, to: u64) -> Result<(), Errno> {
        let f = self.file_mut(ino)?;
        for s in first..=last {
            if f.dirty.contains(s) {
                f.misdirected.insert(s, to + (s - first));
            }
        }
        Ok(())
    }

    /// The write of sectors `first..=last` is acknowledged and never persisted.
    pub fn lose_write(&mut self, ino: Ino, first: u64, last: u64) -> Result<(), Errno> {
        let f = self.file_mut(ino)?;
        for s in first..=last {
            f.dirty.remove(s);
            f.misdirected.remove(&s);
        }
        Ok(())
    }

    /// A write refused before anything was written (a `write_error` fault):
    /// still an operation and a write, so later ones keep their numbers.
    pub fn refused_write(&mut self) {
        self.ops += 1;
        self.writes += 1;
    }
}
