//! path_*: names on the node's simulated disk, relative to a directory fd.
//!
//! There are no symlinks on the simulated disk: `path_symlink` and
//! `path_link` return ENOTSUP, `path_readlink` EINVAL (not a link).
use super::errno::{self, Errno};
use super::fdtable::{Fd, OpenDir, OpenFile};
use super::layout::*;
use super::{fd, mem, Cx};

fn ok(r: Result<(), Errno>) -> Errno {
    r.err().unwrap_or(errno::SUCCESS)
}

/// The absolute path of `name` in directory `parent` (for the trace).
fn joined(disk: &crate::disk::Disk, parent: crate::disk::Ino, name: &str) -> String {
    let base = disk.path_of(parent);
    if base == "/" { format!("/{name}") } else { format!("{base}/{name}") }
}

/// A create or mkdir (`op`, by `make`) of `name` in `parent`: room is made
/// first (`fd::make_room`), and a refusal for want of it is in the trace.
fn new_inode(cx: &mut Cx<'_>, parent: crate::disk::Ino, name: &str, op: &str, make: fn(&mut crate::disk::Disk, crate::disk::Ino, &str, crate::vtime::VTime) -> Result<crate::disk::Ino, Errno>) -> Result<crate::disk::Ino, Errno> {
    fd::make_room(cx, None, 0, 0);
    let (idx, now) = (cx.node.idx, cx.world.now);
    let disk = &mut cx.world.disks[idx];
    match make(disk, parent, name, now) {
        Err(e) if e == errno::NOSPC => {
            let at = joined(disk, parent, name);
            cx.world.no_space_at(idx, op, at, 0, 0, 0);
            Err(e)
        }
        r => r,
    }
}

/// Bound on a path a guest passes (Linux's PATH_MAX): longer is ENAMETOOLONG.
pub const PATH_BYTES_MAX: u32 = 4096;

fn path_arg(cx: &Cx<'_>, ptr: u32, len: u32) -> Result<String, Errno> {
    if len > PATH_BYTES_MAX {
        return Err(errno::NAMETOOLONG);
    }
    let p = mem::string(cx.mem, ptr, len)?;
    if p.contains('\0') {
        return Err(errno::INVAL);
    }
    Ok(p)
}

#[allow(clippy::too_many_arguments)]
pub fn path_open(
    cx: &mut Cx<'_>,
    dirfd: u32,
    path_ptr: u32,
    path_len: u32,
    oflags: u16,
    rights: u64,
    fdflags: u16,
    fd_out: u32,
) -> Errno {
    let mut opened = None;
    let r = (|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, path_ptr, path_len)?;
        opened = Some((dir, path.clone()));
        if dir == crate::disk::ROOT && path.trim_start_matches('/') == super::fdtable::ANTITHESIS_OUTPUT.trim_start_matches('/') {
            let new_fd = cx.node.fds.insert(Fd::AntithesisSink)?;
            return mem::write_u32(cx.mem, fd_out, new_fd);
        }
        let idx = cx.node.idx;
        // /etc/hosts names every node instance, unless the disk has its own.
        if dir == crate::disk::ROOT && path.trim_start_matches('/') == super::fdtable::HOSTS_PATH && cx.world.disks[idx].lookup(dir, &path).is_err() {
            let data: std::sync::Arc<[u8]> = cx.world.net.hosts_file().into_bytes().into();
            let new_fd = cx.node.fds.insert(Fd::Synthetic { data, offset: 0 })?;
            return mem::write_u32(cx.mem, fd_out, new_fd);
        }
        let now = cx.world.now;
        let disk = &mut cx.world.disks[idx];
        let ino = match disk.lookup(dir, &path) {
            Ok(ino) => {
                if oflags & OFLAGS_CREAT != 0 && oflags & OFLAGS_EXCL != 0 {
                    return Err(errno::EXIST);
                }
                ino
            }
            Err(e) if e == errno::NOENT && oflags & OFLAGS_CREAT != 0 => {
                let (parent, name) = disk.resolve_parent(dir, &path)?;
                let ino = new_inode(cx, parent, &name, "create", crate::disk::Disk::create_file)?;
                let created = cx.world.disks[idx].path_of(ino);
                cx.world.disk_event(idx, crate::trace::DiskOp::Create, created, None, None);
                ino
            }
            Err(e) => return Err(e),
        };
        let is_dir = fd::is_dir(cx, ino)?;
        if oflags & OFLAGS_DIRECTORY != 0 && !is_dir {
            return Err(errno::NOTDIR);
        }
        let entry = if is_dir {
            if oflags & OFLAGS_TRUNC != 0 || fdflags & FDFLAGS_APPEND != 0 {
                return Err(errno::ISDIR);
            }
            let _ = rights;
            Fd::Dir(OpenDir { ino, preopen: None, flags: fdflags })
        } else {
            let readable = rights & RIGHTS_FD_READ != 0;
            let writable = rights & RIGHTS_FD_WRITE != 0;
            if oflags & OFLAGS_TRUNC != 0 {
                if !writable {
                    return Err(errno::INVAL);
                }
                if cx.world.disks[idx].inode(ino)?.size() > 0 {
                    cx.world.disks[idx].set_size(ino, 0, now)?;
                    let truncated = cx.world.disks[idx].path_of(ino);
                    cx.world.disk_event(idx, crate::trace::DiskOp::Truncate, truncated, None, Some(0));
                }
            }
            Fd::File(OpenFile { ino, offset: 0, readable, writable, flags: fdflags })
        };
        let new_fd = cx.node.fds.insert(entry)?;
        mem::write_u32(cx.mem, fd_out, new_fd)
    })();
    if let (Err(e), Some((dir, path))) = (r, opened) {
        cx.world.note_missing_dir(cx.node.idx, dir, &path, e);
    }
    ok(r)
}

pub fn path_create_directory(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32) -> Errno {
    let mut asked = None;
    let r = (|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        asked = Some((dir, path.clone()));
        let idx = cx.node.idx;
        let (parent, name) = cx.world.disks[idx].resolve_parent(dir, &path)?;
        let ino = new_inode(cx, parent, &name, "mkdir", crate::disk::Disk::mkdir)?;
        let made = cx.world.disks[idx].path_of(ino);
        cx.world.disk_event(idx, crate::trace::DiskOp::Mkdir, made, None, None);
        Ok(())
    })();
    if let (Err(e), Some((dir, path))) = (r, asked) {
        cx.world.note_missing_dir(cx.node.idx, dir, &path, e);
    }
    ok(r)
}

pub fn path_filestat_get(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32, out: u32) -> Errno {
    ok((|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        let ino = cx.world.disks[cx.node.idx].lookup(dir, &path)?;
        fd::stat_inode(cx, ino, out)
    })())
}

pub fn path_filestat_set_times(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32) -> Errno {
    ok((|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        cx.world.disks[cx.node.idx].lookup(dir, &path).map(|_| ())
    })())
}

pub fn path_unlink_file(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32) -> Errno {
    ok((|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        if path.ends_with('/') {
            return Err(errno::NOTDIR);
        }
        let now = cx.world.now;
        let idx = cx.node.idx;
        let disk = &mut cx.world.disks[idx];
        let (parent, name) = disk.resolve_parent(dir, &path)?;
        disk.unlink(parent, &name, now)?;
        let gone = joined(disk, parent, &name);
        cx.world.disk_event(idx, crate::trace::DiskOp::Unlink, gone, None, None);
        Ok(())
    })())
}

pub fn path_remove_directory(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32) -> Errno {
    ok((|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        let now = cx.world.now;
        let idx = cx.node.idx;
        let disk = &mut cx.world.disks[idx];
        let (parent, name) = disk.resolve_parent(dir, &path)?;
        let ino = disk.lookup(parent, &name)?;
        if !disk.inode(ino)?.is_dir() {
            return Err(errno::NOTDIR);
        }
        disk.rmdir(parent, &name, now)?;
        let gone = joined(disk, parent, &name);
        cx.world.disk_event(idx, crate::trace::DiskOp::Rmdir, gone, None, None);
        Ok(())
    })())
}

pub fn path_rename(cx: &mut Cx<'_>, from_fd: u32, from_ptr: u32, from_len: u32, to_fd: u32, to_ptr: u32, to_len: u32) -> Errno {
    ok((|| {
        let from_dir = cx.node.fds.dir(from_fd)?;
        let to_dir = cx.node.fds.dir(to_fd)?;
        let from = path_arg(cx, from_ptr, from_len)?;
        let to = path_arg(cx, to_ptr, to_len)?;
        let now = cx.world.now;
        let disk = &mut cx.world.disks[cx.node.idx];
        let (fp, fname) = disk.resolve_parent(from_dir, &from)?;
        let (tp, tname) = disk.resolve_parent(to_dir, &to)?;
        let (old, new) = (joined(disk, fp, &fname), joined(disk, tp, &tname));
        disk.rename(fp, &fname, tp, &tname, now)?;
        if old != new {
            cx.world.disk_event(cx.node.idx, crate::trace::DiskOp::Rename, old, Some(new), None);
        }
        Ok(())
    })())
}

pub fn path_readlink(cx: &mut Cx<'_>, dirfd: u32, ptr: u32, len: u32) -> Errno {
    ok((|| {
        let dir = cx.node.fds.dir(dirfd)?;
        let path = path_arg(cx, ptr, len)?;
        cx.world.disks[cx.node.idx].lookup(dir, &path)?;
        Err(errno::INVAL)
    })())
}
