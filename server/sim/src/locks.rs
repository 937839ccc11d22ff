//! Advisory file locks (`flock`), one table per run.
//!
//! As on Linux, a lock belongs to an open file: the node's descriptor. A
//! second `flock` through the same descriptor converts the lock (shared to
//! exclusive and back); through another descriptor of the same file it
//! conflicts like any other holder. A conflict is `EWOULDBLOCK` with
//! `LOCK_NB`; without it, since the holder can only be the same node (disks
//! are not shared), waiting would never end, so it is `EDEADLK` instead of
//! a hang. Closing the descriptor releases its lock; a crash or an exit
//! releases every lock of the node. `fcntl` record locks need no table:
//! they belong to the process, and a node is one process, so its own
//! requests always succeed (the Go overlay answers them itself).
use crate::disk::Ino;
use crate::errno::{self, Errno};
use std::collections::{BTreeMap, BTreeSet};

pub const LOCK_SH: i32 = 1;
pub const LOCK_EX: i32 = 2;
pub const LOCK_NB: i32 = 4;
pub const LOCK_UN: i32 = 8;

/// Bound on files locked at once in a run.
pub const LOCKED_FILES_MAX: usize = 65_536;

#[derive(Default, Debug)]
struct FileLock {
    exclusive: Option<u32>,
    shared: BTreeSet<u32>,
}

#[derive(Default, Debug)]
pub struct Locks {
    by_file: BTreeMap<(usize, Ino), FileLock>,
}

impl Locks {
    /// `flock(fd, op)` by node `node` on its file `ino`.
    pub fn flock(&mut self, node: usize, ino: Ino, fd: u32, op: i32) -> Result<(), Errno> {
        let nb = op & LOCK_NB != 0;
        let key = (node, ino);
        match op & !LOCK_NB {
            LOCK_UN => {
                if let Some(l) = self.by_file.get_mut(&key) {
                    l.shared.remove(&fd);
                    if l.exclusive == Some(fd) {
                        l.exclusive = None;
                    }
                }
                self.collect(key);
                Ok(())
            }
            kind @ (LOCK_SH | LOCK_EX) => {
                if !self.by_file.contains_key(&key) && self.by_file.len() >= LOCKED_FILES_MAX {
                    return Err(errno::NOLCK);
                }
                let l = self.by_file.entry(key).or_default();
                let others_exclusive = l.exclusive.is_some_and(|h| h != fd);
                let others_shared = l.shared.iter().any(|&h| h != fd);
                let conflict = others_exclusive || (kind == LOCK_EX && others_shared);
                if conflict {
                    self.collect(key);
                    return Err(if nb { errno::AGAIN } else { errno::DEADLK });
                }
                if kind == LOCK_EX {
                    l.shared.remove(&fd);
                    l.exclusive = Some(fd);
                } else {
                    if l.exclusive == Some(fd) {
                        l.exclusive = None;
                    }
                    l.shared.insert(fd);
                }
                Ok(())
            }
            _ => Err(errno::INVAL),
        }
    }

    fn collect(&mut self, key: (usize, Ino)) {
        if self.by_file.get(&key).is_some_and(|l| l.exclusive.is_none() && l.shared.is_empty()) {
            self.by_file.remove(&key);
        }
    }

    /// The descriptor was closed: its locks go.
    pub fn release_fd(&mut self, node: usize, fd: u32) {
        for l in self.by_file.range_mut((node, 0)..=(node, Ino::MAX)).map(|(_, l)| l) {
            l.shared.remove(&fd);
            if l.exclusive == Some(fd) {
                l.exclusive = None;
            }
        }
        self.by_file.retain(|_, l| l.exclusive.is_some() || !l.shared.is_empty());
    }

    /// The node crashed or exited: all its locks go.
    pub fn release_node(&mut self, node: usize) {
        self.by_file.retain(|(n, _), _| *n != node);
    }

    pub fn held(&self, node: usize) -> usize {
        self.by_file.range((node, 0)..=(node, Ino::MAX)).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flock_as_on_linux_within_one_process() {
        let mut l = Locks::default();
        assert_eq!(l.flock(0, 7, 3, LOCK_EX | LOCK_NB), Ok(()));
        assert_eq!(l.flock(0, 7, 3, LOCK_EX | LOCK_NB), Ok(()), "the same descriptor again");
        assert_eq!(l.flock(0, 7, 4, LOCK_SH | LOCK_NB), Err(errno::AGAIN), "another descriptor conflicts");
        assert_eq!(l.flock(0, 7, 4, LOCK_SH), Err(errno::DEADLK), "and would wait for ever");
        assert_eq!(l.flock(0, 7, 3, LOCK_SH), Ok(()), "converts to shared");
        assert_eq!(l.flock(0, 7, 4, LOCK_SH | LOCK_NB), Ok(()), "shared with shared");
        assert_eq!(l.flock(1, 7, 3, LOCK_EX | LOCK_NB), Ok(()), "another node's disk is another file");
        l.release_fd(0, 3);
        assert_eq!(l.flock(0, 7, 5, LOCK_EX | LOCK_NB), Err(errno::AGAIN), "fd 4 still holds it");
        l.release_node(0);
        assert_eq!(l.held(0), 0);
        assert_eq!(l.flock(0, 7, 5, LOCK_EX | LOCK_NB), Ok(()), "a crash released everything");
        assert_eq!(l.held(1), 1);
    }
}
