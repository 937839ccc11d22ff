//! The POSIX calls the snapshot runner makes, and the only `unsafe` under
//! `snapshots/` (tidy checks): fork, pipes, poll, waiting, signals and
//! process exit, each behind a small safe wrapper whose `// SAFETY:` says
//! why the call holds. `runner` decides when to make them.
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

/// A child process of ours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pid(libc::pid_t);

/// Proof that this process had one thread when it was made: what `fork`
/// needs. A forked child has one thread too (fork keeps only the caller),
/// and the runner starts none, so the proof passes down the tree.
#[derive(Clone, Copy, Debug)]
pub struct OneThread(());

/// The proof, or how many threads this process has (from /proc; one when it
/// cannot tell).
pub fn one_thread() -> Result<OneThread, usize> {
    match std::fs::read_dir("/proc/self/task").map_or(1, |d| d.count()) {
        1 => Ok(OneThread(())),
        n => Err(n),
    }
}

/// Which side of a fork this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forked {
    Child,
    Parent(Pid),
}

pub fn fork(_: OneThread) -> Forked {
    // SAFETY: the process has one thread (`OneThread`), so the child has
    // every lock it needs in a consistent state.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed: {}", io::Error::last_os_error());
    if pid == 0 { Forked::Child } else { Forked::Parent(Pid(pid)) }
}

/// Makes this process the root of its own tree: it leads a new process
/// group, adopts every orphan below it (the subreaper), and dies with its
/// parent.
pub fn become_tree_root() {
    // SAFETY: plain process calls with no memory handed over.
    unsafe {
        libc::setpgid(0, 0);
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1);
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
}

/// Kills this process's group (everything below a tree root) and exits
/// with `code`.
pub fn end_group(code: i32) -> ! {
    // SAFETY: signals our own process group, ignoring the polite one
    // ourselves; `_exit` ends the process at once.
    unsafe {
        libc::signal(libc::SIGTERM, libc::SIG_IGN);
        libc::kill(0, libc::SIGTERM);
        libc::kill(0, libc::SIGKILL);
        libc::_exit(code)
    }
}

/// Ends this process at once: no destructor runs, as none of a world that
/// is also a snapshot's (shared with the process it was forked from) may.
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` touches no memory of ours; skipping destructors is the
    // point.
    unsafe { libc::_exit(code) }
}

/// Kills a child of ours.
pub fn kill(pid: Pid) {
    // SAFETY: signals our own child, not yet waited for (so its pid is not
    // anyone else's).
    unsafe { libc::kill(pid.0, libc::SIGKILL) };
}

/// How a child ended.
pub enum Ended {
    Signal(i32),
    Exit(i32),
}

/// Waits for child `pid` to end; None when it cannot be waited for.
pub fn wait(pid: Pid) -> Option<Ended> {
    let mut status = 0;
    // SAFETY: waits for our own child, writing only `status`.
    let r = unsafe { libc::waitpid(pid.0, &mut status, 0) };
    if r != pid.0 {
        return None;
    }
    Some(if libc::WIFSIGNALED(status) { Ended::Signal(libc::WTERMSIG(status)) } else { Ended::Exit(libc::WEXITSTATUS(status)) })
}

/// Reaps every child that has ended, without waiting for the others.
pub fn reap() {
    let mut status = 0;
    // SAFETY: reaps any ended child (a tree root is the subreaper of its
    // tree), writing only `status`.
    while unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) } > 0 {}
}

/// A new pipe: (read end, write end).
pub fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: pipe writes two descriptors into the array.
    let r = unsafe { libc::pipe(fds.as_mut_ptr()) };
    assert_eq!(r, 0, "pipe failed: {}", io::Error::last_os_error());
    // SAFETY: two new descriptors, each owned by its File alone.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

/// A new descriptor for what `fd` is, owned by the File alone.
pub fn dup(fd: RawFd) -> File {
    // SAFETY: dup of an open descriptor; the new one is ours alone.
    let new = unsafe { libc::dup(fd) };
    assert!(new >= 0, "dup failed: {}", io::Error::last_os_error());
    // SAFETY: `new` is open and nothing else owns it.
    unsafe { File::from_raw_fd(new) }
}

/// Points each of `fds` at /dev/null: what it was (a pipe end, stdout) is
/// closed here, and the number stays an open descriptor, so whoever owns it
/// may still use it or close it.
pub fn point_at_null(fds: &[RawFd]) {
    let null = File::options().read(true).write(true).open("/dev/null").expect("/dev/null opens");
    for &fd in fds {
        // SAFETY: dup2 onto a descriptor number: no memory is handed over,
        // and the number stays open.
        unsafe { libc::dup2(null.as_raw_fd(), fd) };
    }
}

pub fn set_nonblocking(f: &File) {
    // SAFETY: fcntl on an open descriptor, borrowed for the call.
    unsafe {
        let flags = libc::fcntl(f.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(f.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
    }
}

/// A descriptor to poll, and what it is waited for.
#[repr(transparent)]
pub struct Watch(libc::pollfd);

impl Watch {
    /// Ready when `fd` can be read (or is closed).
    pub fn read(fd: RawFd) -> Watch {
        Watch(libc::pollfd { fd, events: libc::POLLIN, revents: 0 })
    }

    /// Ready when `fd` can be written, if `write`; else only when it fails
    /// or is closed.
    pub fn write(fd: RawFd, write: bool) -> Watch {
        Watch(libc::pollfd { fd, events: if write { libc::POLLOUT } else { 0 }, revents: 0 })
    }

    /// Whether the last poll saw anything on it (readable, writable, closed).
    pub fn ready(&self) -> bool {
        self.0.revents != 0
    }

    pub fn writable(&self) -> bool {
        self.0.revents & libc::POLLOUT != 0
    }
}

/// Waits at most `ms` (-1: no bound) until one of `watches` is ready; an
/// interrupted wait sees none ready.
pub fn poll(watches: &mut [Watch], ms: i32) {
    // SAFETY: `Watch` is a `pollfd` (repr(transparent)), and the slice is
    // valid for its length.
    let r = unsafe { libc::poll(watches.as_mut_ptr().cast::<libc::pollfd>(), watches.len() as libc::nfds_t, ms) };
    if r < 0 {
        let e = io::Error::last_os_error();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted, "poll failed: {e}");
        for w in watches.iter_mut() {
            w.0.revents = 0;
        }
    }
}
