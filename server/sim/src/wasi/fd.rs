//! fd_*: descriptors over stdio and the simulated disk.
//!
//! Stdout and stderr are captured per node instance, line by line, into the
//! trace (stamped with virtual time). Stdin is empty: reads return end of
//! file. Regular files never return EAGAIN, even in non-blocking mode.
use super::errno::{self, Errno};
use super::fdtable::{Fd, OpenFile};
use super::layout::*;
use super::{mem, Cx};
use crate::disk::Kind;
use crate::trace::Stdio;

fn ok(r: Result<(), Errno>) -> Errno {
    r.err().unwrap_or(errno::SUCCESS)
}

pub fn fd_write(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, nwritten: u32) -> Errno {
    // On a socket, fd_write is sock_send without flags.
    if matches!(cx.node.fds.get(fd), Ok(Fd::Socket(_))) {
        return super::sock::send_from(cx, fd, iovs, iovs_len, nwritten);
    }
    ok((|| {
        let data = mem::gather(cx.mem, iovs, iovs_len)?;
        cx.charge("fd_write", super::work::bytes(data.len() as u64));
        let n = write_bytes(cx, fd, &data, None)?;
        mem::write_u32(cx.mem, nwritten, n as u32)
    })())
}

pub fn fd_pwrite(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, offset: u64, nwritten: u32) -> Errno {
    ok((|| {
        let data = mem::gather(cx.mem, iovs, iovs_len)?;
        cx.charge("fd_pwrite", super::work::bytes(data.len() as u64));
        if !matches!(cx.node.fds.get(fd)?, Fd::File(_)) {
            return Err(errno::SPIPE);
        }
        let n = write_bytes(cx, fd, &data, Some(offset))?;
        mem::write_u32(cx.mem, nwritten, n as u32)
    })())
}

fn write_bytes(cx: &mut Cx<'_>, fd: u32, data: &[u8], at: Option<u64>) -> Result<usize, Errno> {
    let idx = cx.node.idx;
    match cx.node.fds.get_mut(fd)? {
        Fd::Stdout => {
            // Output is split, hashed and kept: a unit per byte.
            cx.charge("stdout", data.len() as u64);
            cx.node.stdout.push(data, |line| cx.world.output(idx, Stdio::Stdout, line));
            Ok(data.len())
        }
        Fd::Stderr => {
            cx.charge("stderr", data.len() as u64);
            cx.node.stderr.push(data, |line| cx.world.output(idx, Stdio::Stderr, line));
            Ok(data.len())
        }
        Fd::AntithesisSink => {
            cx.node.antithesis.push(data, |line| cx.world.antithesis_line(idx, &line));
            Ok(data.len())
        }
        Fd::Stdin | Fd::Dir(_) | Fd::Synthetic { .. } => Err(errno::BADF),
        Fd::Socket(_) => unreachable!("fd_write sends on a socket before it gets here; fd_pwrite refuses one"),
        Fd::File(f) => {
            if !f.writable {
                return Err(errno::BADF);
            }
            let now = cx.world.now;
            let ops_before = cx.world.disks[idx].ops;
            let offset = match at {
                Some(o) => o,
                None if f.flags & FDFLAGS_APPEND != 0 => cx.world.disks[idx].inode(f.ino)?.size(),
                None => f.offset,
            };
            let ino = f.ino;
            make_room(cx, Some(ino), offset, data.len() as u64);
            let n = cx.world.disk_write(idx, ino, offset, data, now)?;
            super::mmap::after_write(cx, ino, offset, &data[..n]);
            let Fd::File(f) = cx.node.fds.get_mut(fd)? else { unreachable!("the descriptor written is a file") };
            if at.is_none() {
                f.offset = offset + n as u64;
            }
            let (ino, sync) = (f.ino, f.flags & (FDFLAGS_SYNC | FDFLAGS_DSYNC) != 0);
            let latency = cx.world.io_latency();
            cx.world.advance(latency);
            // A crash inside the write happens before its implicit sync.
            let ops_after = cx.world.disks[idx].ops;
            cx.world.after_disk_ops(idx, ops_before, ops_after);
            if sync && cx.world.nodes[idx].alive() && disk_mutation(cx) != Some(crate::disk::Mutation::OSyncIgnored) {
                // The sync is waited for like an fsync once this call
                // returns, so a crash due meanwhile lands before it.
                cx.node.sync_after_write = Some(ino);
            }
            Ok(n)
        }
    }
}

pub fn fd_read(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, nread: u32) -> Errno {
    // On a socket, fd_read is sock_recv without flags.
    if matches!(cx.node.fds.get(fd), Ok(Fd::Socket(_))) {
        return super::sock::recv_into(cx, fd, iovs, iovs_len, 0, nread, 0);
    }
    ok((|| {
        mem::range(cx.mem.len(), nread, 4)?;
        let n = read_into(cx, fd, iovs, iovs_len, None)?;
        mem::write_u32(cx.mem, nread, n as u32)
    })())
}

pub fn fd_pread(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, offset: u64, nread: u32) -> Errno {
    ok((|| {
        if !matches!(cx.node.fds.get(fd)?, Fd::File(_)) {
            return Err(errno::SPIPE);
        }
        let n = read_into(cx, fd, iovs, iovs_len, Some(offset))?;
        mem::write_u32(cx.mem, nread, n as u32)
    })())
}

fn read_into(cx: &mut Cx<'_>, fd: u32, iovs: u32, iovs_len: u32, at: Option<u64>) -> Result<usize, Errno> {
    let idx = cx.node.idx;
    // The host zeroes and copies as much as the iovecs can take.
    let room = mem::capacity(cx.mem, iovs, iovs_len)?;
    cx.charge("fd_read", super::work::bytes(room as u64));
    match cx.node.fds.get_mut(fd)? {
        Fd::Stdin => Ok(0),
        Fd::Stdout | Fd::Stderr | Fd::AntithesisSink => Err(errno::BADF),
        Fd::Dir(_) => Err(errno::ISDIR),
        Fd::Socket(_) => unreachable!("fd_read receives on a socket before it gets here; fd_pread refuses one"),
        Fd::Synthetic { data, offset } => {
            let start = (*offset as usize).min(data.len());
            let max = mem::capacity(cx.mem, iovs, iovs_len)?;
            let end = start + max.min(data.len() - start);
            let chunk = data[start..end].to_vec();
            *offset = end as u64;
            mem::scatter(cx.mem, iovs, iovs_len, &chunk)
        }
        Fd::File(f) => {
            if !f.readable {
                return Err(errno::BADF);
            }
            let mut buf = vec![0u8; mem::capacity(cx.mem, iovs, iovs_len)?];
            let offset = at.unwrap_or(f.offset);
            let n = cx.world.disk_read(idx, f.ino, offset, &mut buf)?;
            let latency = cx.world.io_latency();
            cx.world.advance(latency);
            let placed = mem::scatter(cx.mem, iovs, iovs_len, &buf[..n])?;
            debug_assert_eq!(placed, n);
            if at.is_none() {
                f.offset = offset + n as u64;
            }
            Ok(n)
        }
    }
}

pub fn fd_seek(cx: &mut Cx<'_>, fd: u32, delta: i64, whence: u8, out: u32) -> Errno {
    ok((|| {
        let idx = cx.node.idx;
        let Fd::File(f) = cx.node.fds.get_mut(fd)? else {
            return Err(match cx.node.fds.get(fd)? {
                Fd::Dir(_) => errno::ISDIR,
                _ => errno::SPIPE,
            });
        };
        let base = match whence {
            WHENCE_SET => 0i128,
            WHENCE_CUR => f.offset as i128,
            WHENCE_END => cx.world.disks[idx].inode(f.ino)?.size() as i128,
            _ => return Err(errno::INVAL),
        };
        let target = base + delta as i128;
        if target < 0 || target > i64::MAX as i128 {
            return Err(errno::INVAL);
        }
        f.offset = target as u64;
        mem::write_u64(cx.mem, out, f.offset)
    })())
}

pub fn fd_tell(cx: &mut Cx<'_>, fd: u32, out: u32) -> Errno {
    fd_seek(cx, fd, 0, WHENCE_CUR, out)
}

pub fn fd_close(cx: &mut Cx<'_>, fd: u32) -> Errno {
    ok(cx.node.fds.close(fd).map(|entry| {
        match entry {
            Fd::Socket(s) => super::sock::close(cx, s.id),
            Fd::File(f) => {
                cx.world.disks[cx.node.idx].closed(f.ino);
                cx.world.disks[cx.node.idx].note_orphans_may_go();
                cx.world.locks.release_fd(cx.node.idx, fd);
            }
            Fd::Dir(_) => cx.world.disks[cx.node.idx].note_orphans_may_go(),
            _ => {}
        }
    }))
}

pub fn fd_renumber(cx: &mut Cx<'_>, from: u32, to: u32) -> Errno {
    // A socket renumbered over is closed, as dup2 would.
    let replaced = match cx.node.fds.get(to) {
        Ok(Fd::Socket(s)) if from != to => Some(s.id),
        _ => None,
    };
    let r = cx.node.fds.renumber(from, to);
    if let (Ok(()), Some(id)) = (&r, replaced) {
        super::sock::close(cx, id);
    }
    ok(r)
}

fn filetype(entry: &Fd) -> u8 {
    match entry {
        Fd::Stdin | Fd::Stdout | Fd::Stderr => FILETYPE_CHARACTER_DEVICE,
        Fd::File(_) | Fd::AntithesisSink | Fd::Synthetic { .. } => FILETYPE_REGULAR_FILE,
        Fd::Dir(_) => FILETYPE_DIRECTORY,
        Fd::Socket(_) => FILETYPE_SOCKET_STREAM,
    }
}

pub fn fd_fdstat_get(cx: &mut Cx<'_>, fd: u32, out: u32) -> Errno {
    ok((|| {
        let entry = cx.node.fds.get(fd)?;
        let (flags, rights) = match entry {
            Fd::File(f) => {
                let mut rights = RIGHTS_ALL;
                if !f.readable {
                    rights &= !RIGHTS_FD_READ;
                }
                if !f.writable {
                    rights &= !RIGHTS_FD_WRITE;
                }
                (f.flags, rights)
            }
            Fd::Dir(d) => (d.flags, RIGHTS_ALL),
            Fd::Socket(s) => (s.flags, RIGHTS_ALL),
            Fd::Synthetic { .. } => (0, RIGHTS_ALL & !RIGHTS_FD_WRITE),
            _ => (cx.node.stdio_flags[fd.min(2) as usize], RIGHTS_ALL),
        };
        let ft = filetype(entry);
        mem::bytes_mut(cx.mem, out, FDSTAT_SIZE)?.fill(0);
        mem::write_u8(cx.mem, out, ft)?;
        mem::write_u16(cx.mem, mem::at(out, 2)?, flags)?;
        mem::write_u64(cx.mem, mem::at(out, 8)?, rights)?;
        mem::write_u64(cx.mem, mem::at(out, 16)?, RIGHTS_ALL)
    })())
}

pub fn fd_fdstat_set_flags(cx: &mut Cx<'_>, fd: u32, flags: u16) -> Errno {
    ok((|| {
        // Only APPEND and NONBLOCK may change after open (as on Linux).
        let mutable = FDFLAGS_APPEND | FDFLAGS_NONBLOCK;
        match cx.node.fds.get_mut(fd)? {
            Fd::File(f) => f.flags = (f.flags & !mutable) | (flags & mutable),
            Fd::Dir(d) => d.flags = (d.flags & !mutable) | (flags & mutable),
            Fd::Socket(s) => s.flags = (s.flags & !mutable) | (flags & mutable),
            Fd::Synthetic { .. } => {}
            _ => cx.node.stdio_flags[fd.min(2) as usize] = flags & mutable,
        }
        Ok(())
    })())
}

pub fn fd_fdstat_set_rights(cx: &mut Cx<'_>, fd: u32) -> Errno {
    ok(cx.node.fds.get(fd).map(|_| ()))
}

pub fn write_filestat(cx: &mut Cx<'_>, out: u32, ino: u64, ft: u8, nlink: u64, size: u64, mtime: u64, ctime: u64) -> Result<(), Errno> {
    mem::bytes_mut(cx.mem, out, FILESTAT_SIZE)?.fill(0);
    mem::write_u64(cx.mem, out, 1)?; // dev
    mem::write_u64(cx.mem, mem::at(out, 8)?, ino)?;
    mem::write_u8(cx.mem, mem::at(out, 16)?, ft)?;
    mem::write_u64(cx.mem, mem::at(out, 24)?, nlink)?;
    mem::write_u64(cx.mem, mem::at(out, 32)?, size)?;
    mem::write_u64(cx.mem, mem::at(out, 40)?, mtime)?; // atime: we do not track reads
    mem::write_u64(cx.mem, mem::at(out, 48)?, mtime)?;
    mem::write_u64(cx.mem, mem::at(out, 56)?, ctime)
}

pub fn stat_inode(cx: &mut Cx<'_>, ino: u64, out: u32) -> Result<(), Errno> {
    let idx = cx.node.idx;
    let inode = cx.world.disks[idx].inode(ino)?;
    let ft = if inode.is_dir() { FILETYPE_DIRECTORY } else { FILETYPE_REGULAR_FILE };
    let (nlink, size) = (inode.nlink(), inode.size());
    let mtime = super::clock::REALTIME_EPOCH_NS + inode.mtime.nanos();
    let ctime = super::clock::REALTIME_EPOCH_NS + inode.ctime.nanos();
    write_filestat(cx, out, ino, ft, nlink, size, mtime, ctime)
}

pub fn fd_filestat_get(cx: &mut Cx<'_>, fd: u32, out: u32) -> Errno {
    ok((|| match cx.node.fds.get(fd)? {
        Fd::File(f) => {
            let ino = f.ino;
            stat_inode(cx, ino, out)
        }
        Fd::Dir(d) => {
            let ino = d.ino;
            stat_inode(cx, ino, out)
        }
        Fd::AntithesisSink => write_filestat(cx, out, 0, FILETYPE_REGULAR_FILE, 1, 0, 0, 0),
        Fd::Synthetic { data, .. } => {
            let size = data.len() as u64;
            write_filestat(cx, out, 0, FILETYPE_REGULAR_FILE, 1, size, 0, 0)
        }
        Fd::Socket(_) => write_filestat(cx, out, 0, FILETYPE_SOCKET_STREAM, 1, 0, 0, 0),
        _ => write_filestat(cx, out, 0, FILETYPE_CHARACTER_DEVICE, 1, 0, 0, 0),
    })())
}

fn open_file(cx: &Cx<'_>, fd: u32) -> Result<OpenFile, Errno> {
    match cx.node.fds.get(fd)? {
        Fd::File(f) => Ok(f.clone()),
        Fd::Dir(_) => Err(errno::ISDIR),
        _ => Err(errno::INVAL),
    }
}

pub fn fd_filestat_set_size(cx: &mut Cx<'_>, fd: u32, size: u64) -> Errno {
    ok((|| {
        let f = open_file(cx, fd)?;
        if !f.writable {
            return Err(errno::BADF);
        }
        let idx = cx.node.idx;
        set_size(cx, f.ino, size, "truncate")?;
        let path = cx.world.disks[idx].path_of(f.ino);
        cx.world.disk_event(idx, crate::trace::DiskOp::Truncate, path, None, Some(size));
        Ok(())
    })())
}

pub fn fd_filestat_set_times(cx: &mut Cx<'_>, fd: u32) -> Errno {
    ok(cx.node.fds.get(fd).map(|_| ()))
}

/// fsync / fdatasync: the node waits `fsync_latency` of virtual time, then
/// the data (or, for a directory, its names) becomes durable, or the fsync
/// fails with EIO (a fault). A crash during the wait means it never happened.
pub async fn fd_sync(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, fd: u32) -> wasmtime::Result<i32> {
    let target = super::host(caller, |cx| -> Result<Option<u64>, Errno> {
        let ino = match cx.node.fds.get(fd)? {
            Fd::File(f) => f.ino,
            Fd::Dir(d) => d.ino,
            _ => return Ok(None),
        };
        // A shared writable mapping's writes reach the file before it syncs.
        super::mmap::before_sync(cx, ino)?;
        Ok(Some(ino))
    });
    // Writing a mapping back can be where a crash lands.
    crate::traps::crashed(caller)?;
    match target {
        Ok(Some(ino)) => sync_ino(caller, ino).await,
        Ok(None) => Ok(0),
        Err(e) => Ok(i32::from(e)),
    }
}

/// After a write: the sync an O_SYNC/O_DSYNC descriptor asked for, waited
/// for as an fsync is (other nodes run meanwhile; a crash then means it
/// never took effect). A failed sync fails the write with its errno.
pub async fn finish_sync_write(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, code: i32) -> wasmtime::Result<i32> {
    let Some(ino) = caller.data_mut().local.sync_after_write.take() else { return Ok(code) };
    if code != 0 {
        return Ok(code);
    }
    sync_ino(caller, ino).await
}

/// pwrite, then its O_SYNC wait.
pub async fn fd_pwrite_async(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, fd: u32, iovs: u32, iovs_len: u32, offset: u64, nwritten: u32) -> wasmtime::Result<i32> {
    let e = super::host(caller, |cx| fd_pwrite(cx, fd, iovs, iovs_len, offset, nwritten));
    crate::traps::crashed(caller)?;
    finish_sync_write(caller, i32::from(e)).await
}

/// fd_read and fd_write on a blocking socket wait like sock_recv/sock_send
/// (a write then makes its O_SYNC wait).
pub async fn fd_read_async(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, fd: u32, iovs: u32, iovs_len: u32, nread: u32) -> wasmtime::Result<i32> {
    super::sock::blocking(caller, fd, super::sock::Wait::Receive, |cx| fd_read(cx, fd, iovs, iovs_len, nread)).await
}

pub async fn fd_write_async(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, fd: u32, iovs: u32, iovs_len: u32, nwritten: u32) -> wasmtime::Result<i32> {
    let code = super::sock::blocking(caller, fd, super::sock::Wait::Send, |cx| fd_write(cx, fd, iovs, iovs_len, nwritten)).await?;
    finish_sync_write(caller, code).await
}

/// Waits `fsync_latency`, then syncs `ino` (what fsync and msync(MS_SYNC) do).
pub async fn sync_ino(caller: &mut wasmtime::Caller<'_, crate::node::NodeCtx>, ino: u64) -> wasmtime::Result<i32> {
    let deadline = super::host(caller, |cx| {
        let latency = cx.world.fsync_latency();
        cx.world.now + latency
    });
    super::poll::suspend(caller, Some(deadline), false).await?;
    let r = super::host(caller, |cx| cx.world.fsync(cx.node.idx, ino));
    crate::traps::crashed(caller)?;
    Ok(i32::from(r.err().unwrap_or(errno::SUCCESS)))
}

pub fn fd_advise(cx: &mut Cx<'_>, fd: u32) -> Errno {
    ok(open_file(cx, fd).map(|_| ()))
}

pub fn fd_allocate(cx: &mut Cx<'_>, fd: u32, offset: u64, len: u64) -> Errno {
    ok((|| {
        let f = open_file(cx, fd)?;
        let idx = cx.node.idx;
        let want = offset.checked_add(len).ok_or(errno::FBIG)?;
        if cx.world.disks[idx].inode(f.ino)?.size() < want {
            set_size(cx, f.ino, want, "allocate")?;
        }
        Ok(())
    })())
}

pub fn fd_prestat_get(cx: &mut Cx<'_>, fd: u32, out: u32) -> Errno {
    ok((|| match cx.node.fds.get(fd)? {
        Fd::Dir(d) if d.preopen.is_some() => {
            let len = d.preopen.as_ref().unwrap().len() as u32;
            mem::write_u32(cx.mem, out, 0)?;
            mem::write_u32(cx.mem, mem::at(out, 4)?, len)
        }
        _ => Err(errno::BADF),
    })())
}

pub fn fd_prestat_dir_name(cx: &mut Cx<'_>, fd: u32, path: u32, len: u32) -> Errno {
    ok((|| match cx.node.fds.get(fd)? {
        Fd::Dir(d) if d.preopen.is_some() => {
            let name = d.preopen.clone().unwrap();
            if (len as usize) < name.len() {
                return Err(errno::NAMETOOLONG);
            }
            mem::bytes_mut(cx.mem, path, name.len() as u32)?.copy_from_slice(name.as_bytes());
            Ok(())
        }
        _ => Err(errno::BADF),
    })())
}

/// Entries in name order; the cookie is the index of the next entry.
pub fn fd_readdir(cx: &mut Cx<'_>, fd: u32, buf: u32, buf_len: u32, cookie: u64, used: u32) -> Errno {
    ok((|| {
        let ino = cx.node.fds.dir(fd).map_err(|e| if e == errno::NOTDIR { errno::NOTDIR } else { e })?;
        let entries = cx.world.disks[cx.node.idx].list(ino)?;
        // Listing builds every entry on each call: a huge folder costs.
        cx.charge("fd_readdir entries", entries.len() as u64 * super::work::PER_DIR_ENTRY);
        let mut out = Vec::new();
        for (i, (name, ino, is_dir)) in entries.iter().enumerate().skip(cookie as usize) {
            let mut header = [0u8; DIRENT_HEADER_SIZE];
            header[0..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
            header[8..16].copy_from_slice(&ino.to_le_bytes());
            header[16..20].copy_from_slice(&(name.len() as u32).to_le_bytes());
            header[20] = if *is_dir { FILETYPE_DIRECTORY } else { FILETYPE_REGULAR_FILE };
            out.extend_from_slice(&header);
            out.extend_from_slice(name.as_bytes());
            if out.len() >= buf_len as usize {
                break;
            }
        }
        // A full buffer tells the guest to call again from its last cookie.
        let n = out.len().min(buf_len as usize);
        mem::bytes_mut(cx.mem, buf, n as u32)?.copy_from_slice(&out[..n]);
        mem::write_u32(cx.mem, used, n as u32)
    })())
}

/// Sets a file's size (`op`: truncate, allocate): room is made first for
/// growth, and a refusal for want of it is in the trace.
fn set_size(cx: &mut Cx<'_>, ino: crate::disk::Ino, size: u64, op: &str) -> Result<(), Errno> {
    let (idx, now) = (cx.node.idx, cx.world.now);
    let old = cx.world.disks[idx].inode(ino)?.size();
    make_room(cx, Some(ino), old, size.saturating_sub(old));
    let r = cx.world.disks[idx].set_size(ino, size, now);
    if r == Err(errno::NOSPC) {
        cx.world.no_space(idx, op, ino, 0, size - old, 0);
    }
    r
}

/// Before a write, truncate up, create or mkdir the disk has no room for:
/// frees what removals and shrinks not yet durable hold (`Disk::reclaim`),
/// as a file system does before it answers ENOSPC. `ino` None: a new inode.
pub fn make_room(cx: &mut Cx<'_>, ino: Option<crate::disk::Ino>, offset: u64, len: u64) {
    let (idx, now) = (cx.node.idx, cx.world.now);
    let disk = &mut cx.world.disks[idx];
    if disk.short_of_room(ino, offset, len, now) {
        let (fds, mappings) = (&cx.node.fds, &cx.node.mappings);
        disk.reclaim(now, |i| fds.holds(i) || mappings.iter().any(|m| m.ino == i));
    }
}

fn disk_mutation(cx: &Cx<'_>) -> Option<crate::disk::Mutation> {
    cx.world.disks[cx.node.idx].mutation
}

/// Used by `path_open` to decide the new descriptor's type.
pub fn is_dir(cx: &Cx<'_>, ino: u64) -> Result<bool, Errno> {
    Ok(matches!(cx.world.disks[cx.node.idx].inode(ino)?.kind, Kind::Dir { .. }))
}
