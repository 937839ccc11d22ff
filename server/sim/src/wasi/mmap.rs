//! Memory mappings of files on the simulated disk (`seedfall.mmap` and
//! friends, which the Go storage overlay's `syscall.Mmap` calls).
//!
//! wasm has one linear memory and no page tables, so a mapping is a copy:
//! the guest allocates the mapping's memory, and the host keeps that copy
//! coherent with the file's cache at defined points:
//! - at `mmap`, the copy is filled from the file (zeros past its end);
//! - every write to the file (`write`, `pwrite`, from any descriptor of the
//!   node) is copied into every mapping of it that covers the bytes written,
//!   so a read-only mapping always shows the file's current contents, as a
//!   shared mapping does on Linux;
//! - a shared writable mapping's own writes reach the file's cache at
//!   `msync`, `munmap` and an `fsync` of the file (only the sectors that
//!   differ are written), and become durable only through `msync(MS_SYNC)`
//!   or an fsync, under the disk's model. Until then a crash loses them, as
//!   it loses a `write` that was not synced. Between those points a `read`
//!   of the file does not see them (on Linux it would).
//!
//! Mappings die with the instance (a crash drops them with its memory).
//! Bounded by `MAPPINGS_MAX` per instance.
use super::errno::{self, Errno};
use super::fdtable::Fd;
use super::Cx;
use crate::disk::Ino;

pub const MAPPINGS_MAX: usize = 4096;

pub const PROT_WRITE: i32 = 2;
pub const MAP_SHARED: i32 = 1;
pub const MS_SYNC: i32 = 4;

#[derive(Clone, Debug)]
pub struct Mapping {
    /// Where the copy is in guest memory, and its length.
    pub ptr: u32,
    pub len: u32,
    pub ino: Ino,
    /// The file offset the mapping starts at.
    pub offset: u64,
    /// A shared writable mapping: its writes go back to the file.
    pub shared_write: bool,
}

fn region(mem: &[u8], ptr: u32, len: u32) -> Result<std::ops::Range<usize>, Errno> {
    let start = ptr as usize;
    let end = start.checked_add(len as usize).ok_or(errno::FAULT)?;
    if end > mem.len() {
        return Err(errno::FAULT);
    }
    Ok(start..end)
}

/// `mmap(fd, offset, len)` into guest memory at `ptr`.
pub fn mmap(cx: &mut Cx<'_>, fd: u32, offset: u64, len: u32, ptr: u32, prot: i32, flags: i32) -> Result<(), Errno> {
    let (ino, readable, writable) = match cx.node.fds.get(fd)? {
        Fd::File(f) => (f.ino, f.readable, f.writable),
        _ => return Err(errno::BADF),
    };
    let shared_write = prot & PROT_WRITE != 0 && flags & MAP_SHARED != 0;
    if !readable || (shared_write && !writable) {
        return Err(errno::ACCES);
    }
    if cx.node.mappings.len() >= MAPPINGS_MAX {
        return Err(errno::NOMEM);
    }
    let range = region(cx.mem, ptr, len)?;
    let disk = &cx.world.disks[cx.node.idx];
    let data = match &disk.inode(ino)?.kind {
        crate::disk::Kind::File(f) => &f.data,
        crate::disk::Kind::Dir { .. } => return Err(errno::ACCES),
    };
    let dest = &mut cx.mem[range];
    dest.fill(0);
    if offset < data.len() as u64 {
        let n = (data.len() - offset as usize).min(len as usize);
        dest[..n].copy_from_slice(&data[offset as usize..offset as usize + n]);
    }
    cx.node.mappings.push(Mapping { ptr, len, ino, offset, shared_write });
    Ok(())
}

/// Writes a shared writable mapping's changed sectors back into the file's
/// cache (never past the file's end: a mapping does not grow its file).
fn write_back(cx: &mut Cx<'_>, m: &Mapping) -> Result<(), Errno> {
    if !m.shared_write {
        return Ok(());
    }
    let idx = cx.node.idx;
    let (size, sector) = (cx.world.disks[idx].inode(m.ino)?.size(), cx.world.disks[idx].sector_bytes);
    let end = (m.offset + u64::from(m.len)).min(size);
    let mut at = m.offset;
    let now = cx.world.now;
    while at < end {
        let next = ((at / sector + 1) * sector).min(end);
        let in_mem = &cx.mem[m.ptr as usize + (at - m.offset) as usize..m.ptr as usize + (next - m.offset) as usize];
        let differs = match &cx.world.disks[idx].inode(m.ino)?.kind {
            crate::disk::Kind::File(f) => &f.data[at as usize..next as usize] != in_mem,
            crate::disk::Kind::Dir { .. } => false,
        };
        if differs {
            let bytes = in_mem.to_vec();
            cx.world.disk_write(idx, m.ino, at, &bytes, now)?;
        }
        at = next;
    }
    Ok(())
}

/// `munmap(ptr, len)`: a shared writable mapping goes back to the file first.
pub fn munmap(cx: &mut Cx<'_>, ptr: u32, len: u32) -> Result<(), Errno> {
    let Some(i) = cx.node.mappings.iter().position(|m| m.ptr == ptr && m.len == len) else { return Err(errno::INVAL) };
    let m = cx.node.mappings.remove(i);
    cx.world.disks[cx.node.idx].note_orphans_may_go();
    write_back(cx, &m)
}

/// The first half of `msync`: the mapping containing `ptr` goes back to the
/// file's cache; returns its file, for an `MS_SYNC` fsync after.
pub fn msync_back(cx: &mut Cx<'_>, ptr: u32, len: u32) -> Result<Ino, Errno> {
    let end = u64::from(ptr) + u64::from(len);
    let m = cx.node.mappings.iter().find(|m| ptr >= m.ptr && end <= u64::from(m.ptr) + u64::from(m.len)).cloned().ok_or(errno::NOMEM)?;
    write_back(cx, &m)?;
    Ok(m.ino)
}

/// Before an fsync of `ino`: every shared writable mapping of it goes back.
pub fn before_sync(cx: &mut Cx<'_>, ino: Ino) -> Result<(), Errno> {
    let of_file: Vec<Mapping> = cx.node.mappings.iter().filter(|m| m.ino == ino && m.shared_write).cloned().collect();
    for m in of_file {
        write_back(cx, &m)?;
    }
    Ok(())
}

/// After a write of `data` at `offset` to `ino`: every mapping covering
/// those bytes shows them.
pub fn after_write(cx: &mut Cx<'_>, ino: Ino, offset: u64, data: &[u8]) {
    for m in cx.node.mappings.iter().filter(|m| m.ino == ino) {
        let (lo, hi) = (offset.max(m.offset), (offset + data.len() as u64).min(m.offset + u64::from(m.len)));
        if lo >= hi {
            continue;
        }
        let dest = m.ptr as usize + (lo - m.offset) as usize;
        let src = (lo - offset) as usize;
        let n = (hi - lo) as usize;
        if let Some(d) = cx.mem.get_mut(dest..dest + n) {
            d.copy_from_slice(&data[src..src + n]);
        }
    }
}
