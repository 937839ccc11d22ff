//! The file descriptor table of one node instance.
//!
//! Descriptors are allocated lowest-free-first from 3 (like POSIX), so the
//! numbers a guest sees are a deterministic function of its calls. The table
//! dies with the instance; the disk it points into does not.
use super::errno::{self, Errno};
use crate::disk::{Ino, ROOT};
use std::collections::BTreeMap;

pub const FDS_MAX: u32 = 1024;
/// The single preopened directory: the root of the node's disk.
pub const PREOPEN_FD: u32 = 3;
pub const PREOPEN_NAME: &str = "/";

#[derive(Debug, Clone)]
pub enum Fd {
    Stdin,
    Stdout,
    Stderr,
    File(OpenFile),
    Dir(OpenDir),
    /// The Antithesis SDK's local output file: lines become property events.
    AntithesisSink,
    /// A socket on the simulated network.
    Socket(SocketFd),
    /// A read-only file the host makes up (`/etc/hosts`), not on the disk.
    Synthetic { data: std::sync::Arc<[u8]>, offset: u64 },
}

#[derive(Debug, Clone, Copy)]
pub struct SocketFd {
    pub id: crate::net::SockId,
    /// fdflags: NONBLOCK decides whether a call waits or says EAGAIN.
    pub flags: u16,
    /// SO_RCVTIMEO and SO_SNDTIMEO: how long a blocking receive (accept) or
    /// send waits before it says EAGAIN; `None` waits for ever.
    pub recv_timeout_ns: Option<u64>,
    pub send_timeout_ns: Option<u64>,
}

impl SocketFd {
    pub fn new(id: crate::net::SockId, flags: u16) -> SocketFd {
        SocketFd { id, flags, recv_timeout_ns: None, send_timeout_ns: None }
    }

    pub fn blocking(&self) -> bool {
        self.flags & super::layout::FDFLAGS_NONBLOCK == 0
    }
}

/// The hosts file every node reads, made from the node instance names.
pub const HOSTS_PATH: &str = "etc/hosts";

/// Where the host tells the Antithesis SDK to write (`ANTITHESIS_SDK_LOCAL_OUTPUT`).
pub const ANTITHESIS_OUTPUT: &str = "/.seedfall/antithesis-sdk.jsonl";

#[derive(Debug, Clone)]
pub struct OpenFile {
    pub ino: Ino,
    pub offset: u64,
    pub readable: bool,
    pub writable: bool,
    pub flags: u16,
}

#[derive(Debug, Clone)]
pub struct OpenDir {
    pub ino: Ino,
    /// Some for preopens: the name `fd_prestat_dir_name` reports.
    pub preopen: Option<String>,
    pub flags: u16,
}

#[derive(Debug)]
pub struct FdTable {
    fds: BTreeMap<u32, Fd>,
}

impl Default for FdTable {
    fn default() -> Self {
        FdTable::new()
    }
}

impl FdTable {
    pub fn new() -> FdTable {
        let mut fds = BTreeMap::new();
        fds.insert(0, Fd::Stdin);
        fds.insert(1, Fd::Stdout);
        fds.insert(2, Fd::Stderr);
        fds.insert(PREOPEN_FD, Fd::Dir(OpenDir { ino: ROOT, preopen: Some(PREOPEN_NAME.into()), flags: 0 }));
        FdTable { fds }
    }

    pub fn get(&self, fd: u32) -> Result<&Fd, Errno> {
        self.fds.get(&fd).ok_or(errno::BADF)
    }

    pub fn get_mut(&mut self, fd: u32) -> Result<&mut Fd, Errno> {
        self.fds.get_mut(&fd).ok_or(errno::BADF)
    }

    pub fn dir(&self, fd: u32) -> Result<Ino, Errno> {
        match self.get(fd)? {
            Fd::Dir(d) => Ok(d.ino),
            _ => Err(errno::NOTDIR),
        }
    }

    /// No descriptor left: an insert would fail with EMFILE.
    pub fn full(&self) -> bool {
        self.fds.len() >= FDS_MAX as usize
    }

    pub fn insert(&mut self, entry: Fd) -> Result<u32, Errno> {
        let mut fd = PREOPEN_FD;
        while self.fds.contains_key(&fd) {
            fd += 1;
            if fd >= FDS_MAX {
                return Err(errno::MFILE);
            }
        }
        self.fds.insert(fd, entry);
        Ok(fd)
    }

    pub fn socket(&self, fd: u32) -> Result<SocketFd, Errno> {
        match self.get(fd)? {
            Fd::Socket(s) => Ok(*s),
            _ => Err(errno::NOTSOCK),
        }
    }

    /// Whether a descriptor has inode `ino` open.
    pub fn holds(&self, ino: Ino) -> bool {
        self.fds.values().any(|f| matches!(f, Fd::File(o) if o.ino == ino) || matches!(f, Fd::Dir(d) if d.ino == ino))
    }

    /// What a moment's report shows of each descriptor (stdio and the
    /// preopen left out: every instance has them).
    pub fn handles(&self) -> Vec<crate::moment::Handle> {
        use crate::moment::Handle;
        let mut out = Vec::with_capacity(self.fds.len().saturating_sub(4));
        for (&fd, f) in &self.fds {
            let h = match f {
                Fd::File(o) => Handle { fd, ino: Some(o.ino), offset: o.offset, mode: if o.writable { if o.readable { "rw" } else { "w" } } else { "r" }, socket: None },
                Fd::Dir(d) if d.preopen.is_none() => Handle { fd, ino: Some(d.ino), offset: 0, mode: "dir", socket: None },
                Fd::Socket(s) => Handle { fd, ino: None, offset: 0, mode: "socket", socket: Some(s.id) },
                _ => continue,
            };
            out.push(h);
        }
        out
    }

    pub fn close(&mut self, fd: u32) -> Result<Fd, Errno> {
        self.fds.remove(&fd).ok_or(errno::BADF)
    }

    pub fn renumber(&mut self, from: u32, to: u32) -> Result<(), Errno> {
        self.get(to)?;
        let entry = self.close(from)?;
        self.fds.insert(to, entry);
        Ok(())
    }
}
