//! A block device that records what the kernel writes to it.
//!
//! It is one file, `disk.img`, served by this process over FUSE with
//! `direct_io`. A loop device opened with `--direct-io=on` on that file hands
//! every block write the kernel issues (offset and bytes) to `write`, and
//! every cache flush to `fsync`: the block write log CrashMonkey gets from
//! dm-log-writes, which this kernel does not have (no device-mapper).
//!
//! The bytes are the image file made by mkfs (`base`, read on demand) under
//! an overlay of the sectors written since. The overlay is what a crash image
//! changes: `reset` puts a chosen set of logged writes over the start state,
//! and the writes a mount makes then (journal replay) land in the overlay
//! too and are thrown away with it, so no image is ever copied.
use fuser::{FileAttr, FileType, Filesystem, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite, Request};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The device's sector: the unit of the overlay (writes arrive aligned to it).
pub const SECTOR: u64 = 512;
/// Bound on the bytes one recording may log (a litmus workload writes KiBs).
pub const LOG_BYTES_MAX: u64 = 256 << 20;

const ROOT_INO: u64 = 1;
const IMAGE_INO: u64 = 2;
pub const IMAGE_NAME: &str = "disk.img";
const TTL: Duration = Duration::from_secs(1);

/// One entry of the block write log.
#[derive(Clone, Debug)]
pub enum Entry {
    Write { offset: u64, data: Vec<u8> },
    Flush,
}

pub struct State {
    base: File,
    pub size: u64,
    overlay: BTreeMap<u64, Box<[u8]>>,
    /// Logged while `logging`; the log's bytes are bounded.
    pub log: Vec<Entry>,
    pub logging: bool,
    log_bytes: u64,
    /// A write past `LOG_BYTES_MAX` was not logged: the recording is void.
    pub overflowed: bool,
}

impl State {
    pub fn new(base: File) -> std::io::Result<State> {
        let size = base.metadata()?.len();
        assert_eq!(size % SECTOR, 0, "an image is whole sectors");
        Ok(State { base, size, overlay: BTreeMap::new(), log: Vec::new(), logging: false, log_bytes: 0, overflowed: false })
    }

    fn read_sector(&self, s: u64, out: &mut [u8]) {
        match self.overlay.get(&s) {
            Some(b) => out.copy_from_slice(b),
            None => {
                self.base.read_exact_at(out, s * SECTOR).expect("the base image is readable");
            }
        }
    }

    pub fn read(&self, offset: u64, len: usize) -> Vec<u8> {
        let end = (offset + len as u64).min(self.size);
        let mut out = Vec::with_capacity(end.saturating_sub(offset) as usize);
        let mut sector = vec![0u8; SECTOR as usize];
        let mut at = offset;
        while at < end {
            let s = at / SECTOR;
            self.read_sector(s, &mut sector);
            let from = (at % SECTOR) as usize;
            let n = ((SECTOR as usize - from) as u64).min(end - at) as usize;
            out.extend_from_slice(&sector[from..from + n]);
            at += n as u64;
        }
        out
    }

    /// Applies a write to the overlay (read-modify-write at the edges).
    pub fn apply(&mut self, offset: u64, data: &[u8]) {
        let mut at = offset;
        let end = (offset + data.len() as u64).min(self.size);
        let mut sector = vec![0u8; SECTOR as usize];
        while at < end {
            let s = at / SECTOR;
            let from = (at % SECTOR) as usize;
            let n = ((SECTOR as usize - from) as u64).min(end - at) as usize;
            if n < SECTOR as usize {
                self.read_sector(s, &mut sector);
            }
            let src = (at - offset) as usize;
            sector[from..from + n].copy_from_slice(&data[src..src + n]);
            self.overlay.insert(s, sector.clone().into_boxed_slice());
            at += n as u64;
        }
    }

    fn log(&mut self, entry: Entry) {
        if !self.logging {
            return;
        }
        if let Entry::Write { data, .. } = &entry {
            self.log_bytes += data.len() as u64;
            if self.log_bytes > LOG_BYTES_MAX {
                self.overflowed = true;
                return;
            }
        }
        self.log.push(entry);
    }

    /// The overlay as it is: the state a crash image starts from.
    pub fn snapshot(&self) -> BTreeMap<u64, Box<[u8]>> {
        self.overlay.clone()
    }

    /// Serves `start` with `writes` applied in order (logging off).
    pub fn reset(&mut self, start: &BTreeMap<u64, Box<[u8]>>, writes: &[(u64, &[u8])]) {
        self.logging = false;
        self.overlay = start.clone();
        for (offset, data) in writes {
            self.apply(*offset, data);
        }
    }
}

/// The FUSE side: one folder holding `disk.img`.
pub struct Device(pub Arc<Mutex<State>>);

fn attr(ino: u64, size: u64) -> FileAttr {
    let t = SystemTime::UNIX_EPOCH;
    let (kind, perm, nlink) = if ino == ROOT_INO { (FileType::Directory, 0o755, 2) } else { (FileType::RegularFile, 0o600, 1) };
    FileAttr { ino, size, blocks: size / 512, atime: t, mtime: t, ctime: t, crtime: t, kind, perm, nlink, uid: 0, gid: 0, rdev: 0, blksize: 4096, flags: 0 }
}

impl Filesystem for Device {
    fn init(&mut self, _req: &Request<'_>, config: &mut fuser::KernelConfig) -> Result<(), libc::c_int> {
        // Fewer, larger requests; the kernel caps what it accepts.
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        if parent == ROOT_INO && name == IMAGE_NAME {
            let size = self.0.lock().unwrap().size;
            reply.entry(&TTL, &attr(IMAGE_INO, size), 0);
        } else {
            reply.error(libc::ENOENT);
        }
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match ino {
            ROOT_INO => reply.attr(&TTL, &attr(ROOT_INO, 0)),
            IMAGE_INO => reply.attr(&TTL, &attr(IMAGE_INO, self.0.lock().unwrap().size)),
            _ => reply.error(libc::ENOENT),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn setattr(
        &mut self,
        _req: &Request<'_>,
        ino: u64,
        _mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<fuser::TimeOrNow>,
        _mtime: Option<fuser::TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<u64>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<u32>,
        reply: ReplyAttr,
    ) {
        let state = self.0.lock().unwrap();
        // A device never changes size.
        if ino != IMAGE_INO || size.is_some_and(|s| s != state.size) {
            return reply.error(libc::EPERM);
        }
        reply.attr(&TTL, &attr(IMAGE_INO, state.size));
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        if ino != IMAGE_INO {
            return reply.error(libc::EISDIR);
        }
        // direct_io: every write reaches us as it is issued, none is cached.
        reply.opened(0, fuser::consts::FOPEN_DIRECT_IO);
    }

    #[allow(clippy::too_many_arguments)]
    fn read(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, offset: i64, size: u32, _flags: i32, _lock: Option<u64>, reply: ReplyData) {
        let data = self.0.lock().unwrap().read(offset as u64, size as usize);
        reply.data(&data);
    }

    #[allow(clippy::too_many_arguments)]
    fn write(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, offset: i64, data: &[u8], _wflags: u32, _flags: i32, _lock: Option<u64>, reply: ReplyWrite) {
        let mut state = self.0.lock().unwrap();
        let offset = offset as u64;
        if offset + data.len() as u64 > state.size {
            return reply.error(libc::ENOSPC);
        }
        state.apply(offset, data);
        state.log(Entry::Write { offset, data: data.to_vec() });
        reply.written(data.len() as u32);
    }

    fn fsync(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        // The loop device turns a cache flush (REQ_PREFLUSH, FUA) into this.
        self.0.lock().unwrap().log(Entry::Flush);
        reply.ok();
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock_owner: u64, reply: ReplyEmpty) {
        // close(), not a cache flush.
        reply.ok();
    }

    fn fallocate(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, offset: i64, length: i64, mode: i32, reply: ReplyEmpty) {
        // Discards and write-zeroes reach the backing file as hole punches and
        // zero ranges: both read back as zeros, so log them as zero writes.
        if mode & (libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_ZERO_RANGE) == 0 {
            return reply.error(libc::EOPNOTSUPP);
        }
        let mut state = self.0.lock().unwrap();
        let (offset, end) = (offset as u64, ((offset + length) as u64).min(state.size));
        let zeros = vec![0u8; end.saturating_sub(offset) as usize];
        state.apply(offset, &zeros);
        state.log(Entry::Write { offset, data: zeros });
        reply.ok();
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        if ino != ROOT_INO {
            return reply.error(libc::ENOTDIR);
        }
        let entries = [(ROOT_INO, FileType::Directory, "."), (ROOT_INO, FileType::Directory, ".."), (IMAGE_INO, FileType::RegularFile, IMAGE_NAME)];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }
}
