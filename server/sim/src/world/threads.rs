//! Guest threads of one node instance (wasi-threads), as the world sees
//! them: each spawned thread's scheduling state, the futex queues that
//! `memory.atomic.wait`/`notify` (rewritten into host calls) block and wake
//! on, and the threads spawned in the current step, started after it.
//!
//! The main thread (tid 0) keeps its scheduling state in `NodeState` as a
//! node without threads always did, so a single-threaded guest's run is
//! exactly what it was. Spawned threads are numbered from 1 per incarnation;
//! a crash or an exit of the process ends them all (`clear`).
//!
//! Descriptors and stdio are the process's, shared by its threads: between
//! host calls they live here (`shared`), and `wasi::host` lends them to the
//! calling thread's `NodeLocal` for the call.
use super::Status;
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Bound on a node instance's spawned threads alive at once: a spawn past
/// it fails as EAGAIN (std's `thread::spawn` then panics, `Builder::spawn`
/// returns the error), whatever else the machine is doing.
pub const THREADS_MAX: usize = 128;

/// Bound on the instructions a thread of a threaded guest runs before the
/// scheduler may switch threads, when it makes no host call. Each thread's
/// next quantum is drawn from the `sched` stream after every host call,
/// log-uniformly below twice this (`World::draw_quantum`), so a switch can
/// land on any instruction of a critical section that calls nothing (a data
/// race), short windows included, and a seed names where. Guests without
/// threads keep `scheduler::FUEL_QUANTUM` and draw nothing.
pub const THREAD_QUANTUM_MAX: u64 = 8192;

/// What a failed `thread-spawn` returns: -EAGAIN, which wasi-libc's
/// `pthread_create` turns into EAGAIN.
pub const SPAWN_FAILED: i32 = -6;

/// One spawned thread's scheduling state (the main thread's is the node's).
#[derive(Clone, Debug)]
pub struct ThreadSched {
    pub status: Status,
    pub wait_id: u64,
    pub wants_net: bool,
    pub fuel_charged: u64,
}

/// The process-wide state of a threaded node instance that host calls
/// use: kept here between calls, lent to the calling thread during one.
#[derive(Default)]
pub struct Shared {
    pub fds: crate::wasi::fdtable::FdTable,
    pub mappings: Vec<crate::wasi::mmap::Mapping>,
    pub stdio_flags: [u16; 3],
    pub stdout: crate::node::LineBuffer,
    pub stderr: crate::node::LineBuffer,
    pub antithesis: crate::node::LineBuffer,
}

#[derive(Default)]
pub struct NodeThreads {
    /// The incarnation imports a shared memory: its descriptors live in
    /// `shared`, and it may spawn threads.
    pub threaded: bool,
    pub shared: Option<Shared>,
    /// Spawned threads alive, by tid.
    pub threads: BTreeMap<u32, ThreadSched>,
    /// The last tid handed out (tids count from 1).
    pub last_tid: u32,
    /// Spawned in this step, started by the scheduler after it: (tid, start_arg).
    pub spawns: Vec<(u32, u32)>,
    /// Per address, the threads waiting there in arrival order, with the
    /// wait they are in (a stale entry, whose thread timed out and waits
    /// again elsewhere, is skipped by `notify`).
    pub futex: BTreeMap<u64, VecDeque<(u32, u64)>>,
    /// (tid, wait_id) woken by a notify, not yet seen by the waiter.
    pub notified: BTreeSet<(u32, u64)>,
    /// Each thread's current fuel quantum (`THREAD_QUANTUM_MAX`), which a
    /// preemption charges as time.
    pub quanta: BTreeMap<u32, u64>,
    /// The last wait id given to a spawned thread. It outlives `clear`:
    /// tids start again at 1 after a crash, so a wake-up still pending for
    /// an old incarnation's thread must not match a new one's wait.
    pub wait_seq: u64,
}

impl NodeThreads {
    /// Every thread of the incarnation ends (an exit, a failure, a crash).
    pub fn clear(&mut self) {
        let (threaded, wait_seq) = (self.threaded, self.wait_seq);
        *self = NodeThreads { threaded, wait_seq, ..NodeThreads::default() };
    }

    /// The wait id thread `tid`'s next block will have (the main thread's
    /// is the node's own counter, `main_next`).
    pub fn next_wait_id(&self, tid: u32, main_next: u64) -> u64 {
        if tid == 0 { main_next } else { self.wait_seq + 1 }
    }

    /// A new thread's tid, or None when `THREADS_MAX` are alive.
    pub fn spawn(&mut self, start_arg: u32) -> Option<u32> {
        // `threads` holds the ones spawned this step too.
        if self.threads.len() >= THREADS_MAX {
            return None;
        }
        self.last_tid += 1;
        let tid = self.last_tid;
        self.spawns.push((tid, start_arg));
        self.threads.insert(tid, ThreadSched { status: Status::Runnable, wait_id: 0, wants_net: false, fuel_charged: 0 });
        Some(tid)
    }

    /// Runnable spawned threads, by tid.
    pub fn runnable(&self) -> impl Iterator<Item = u32> + '_ {
        self.threads.iter().filter(|(_, t)| t.status == Status::Runnable).map(|(&tid, _)| tid)
    }

    /// Wakes up to `count` threads waiting at `addr`, first come first
    /// woken; returns them as (tid, wait_id) for the world to wake.
    pub fn notify(&mut self, addr: u64, count: u32) -> Vec<(u32, u64)> {
        let mut woken = Vec::new();
        let Some(queue) = self.futex.get_mut(&addr) else { return woken };
        while (woken.len() as u64) < u64::from(count) {
            let Some((tid, wait_id)) = queue.pop_front() else { break };
            woken.push((tid, wait_id));
            self.notified.insert((tid, wait_id));
        }
        if queue.is_empty() {
            self.futex.remove(&addr);
        }
        woken
    }

    /// Whether the waiter (tid, wait_id) was notified (consumed); if not,
    /// it timed out and leaves the queue at `addr`.
    pub fn wait_ended(&mut self, addr: u64, tid: u32, wait_id: u64) -> bool {
        if self.notified.remove(&(tid, wait_id)) {
            return true;
        }
        if let Some(queue) = self.futex.get_mut(&addr) {
            queue.retain(|&(t, w)| (t, w) != (tid, wait_id));
            if queue.is_empty() {
                self.futex.remove(&addr);
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notify_wakes_first_come_first_and_a_timed_out_waiter_leaves() {
        let mut t = NodeThreads::default();
        for (tid, wait) in [(1, 10), (2, 20), (3, 30)] {
            t.futex.entry(64).or_default().push_back((tid, wait));
        }
        assert_eq!(t.notify(64, 1), vec![(1, 10)]);
        // Thread 2 timed out: it leaves, and a notify of all finds thread 3.
        assert!(!t.wait_ended(64, 2, 20));
        assert_eq!(t.notify(64, u32::MAX), vec![(3, 30)]);
        assert!(t.wait_ended(64, 1, 10) && t.wait_ended(64, 3, 30));
        assert!(t.futex.is_empty() && t.notified.is_empty());
        assert_eq!(t.notify(128, 5), vec![]);
    }

    #[test]
    fn spawns_are_bounded_and_numbered_from_one() {
        let mut t = NodeThreads::default();
        assert_eq!(t.spawn(100), Some(1));
        assert_eq!(t.spawn(200), Some(2));
        for _ in 2..THREADS_MAX {
            t.spawn(0).unwrap();
        }
        assert_eq!(t.spawn(0), None);
        t.wait_seq = 7;
        t.clear();
        assert_eq!(t.spawn(0), Some(1));
        assert_eq!(t.next_wait_id(1, 0), 8, "wait ids are never reused across incarnations");
    }
}
