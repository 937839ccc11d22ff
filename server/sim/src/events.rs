//! The event queue: what will happen at a later virtual time.
//!
//! Ordered by (virtual time, sequence number), so events due at the same
//! instant fire in the order they were scheduled: never by heap accident.
use crate::vtime::VTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bound on pending events per run; a guest that schedules more is stuck in a
/// timer storm and the run fails rather than eat the machine's memory.
pub const EVENTS_PENDING_MAX: usize = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// Wake thread `tid` (0: main) of node `node_idx` if it is still in
    /// the wait numbered `wait_id`.
    Wake { node_idx: usize, tid: u32, wait_id: u64 },
    /// Apply entry `plan_idx` of the run's fault plan.
    Fault { plan_idx: usize },
    /// Start node `node_idx` again, if it is still in crash number `generation`.
    Restart { node_idx: usize, generation: u64 },
    /// A pause of the node may be over.
    Resume { node_idx: usize },
    /// A clock skew of the node ends (unless a later one replaced it).
    SkewEnd { node_idx: usize, skew_id: u64 },
    /// Something on the simulated network: a segment or handshake arrives,
    /// a connect times out, a partition heals.
    Net(crate::net::NetEvent),
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Reverse<(VTime, u64, Event)>>,
    seq_next: u64,
}

impl EventQueue {
    pub fn push(&mut self, at: VTime, event: Event) -> Result<(), QueueFull> {
        if self.heap.len() >= EVENTS_PENDING_MAX {
            return Err(QueueFull);
        }
        self.heap.push(Reverse((at, self.seq_next, event)));
        self.seq_next += 1;
        Ok(())
    }

    /// Drops the pending events `keep` says no to; the rest keep their
    /// order (time, then sequence number).
    pub fn retain(&mut self, mut keep: impl FnMut(&Event) -> bool) {
        self.heap.retain(|Reverse((_, _, e))| keep(e));
    }

    pub fn next_time(&self) -> Option<VTime> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// The next event due at or before `now`.
    pub fn pop_due(&mut self, now: VTime) -> Option<Event> {
        match self.heap.peek() {
            Some(Reverse((t, _, _))) if *t <= now => self.heap.pop().map(|Reverse((_, _, e))| e),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[derive(Debug)]
pub struct QueueFull;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_fires_in_schedule_order() {
        let mut q = EventQueue::default();
        q.push(VTime(5), Event::Wake { node_idx: 2, tid: 0, wait_id: 0 }).unwrap();
        q.push(VTime(5), Event::Wake { node_idx: 1, tid: 0, wait_id: 0 }).unwrap();
        q.push(VTime(3), Event::Wake { node_idx: 9, tid: 0, wait_id: 0 }).unwrap();
        assert_eq!(q.pop_due(VTime(2)), None);
        assert_eq!(q.pop_due(VTime(5)), Some(Event::Wake { node_idx: 9, tid: 0, wait_id: 0 }));
        assert_eq!(q.pop_due(VTime(5)), Some(Event::Wake { node_idx: 2, tid: 0, wait_id: 0 }));
        assert_eq!(q.pop_due(VTime(5)), Some(Event::Wake { node_idx: 1, tid: 0, wait_id: 0 }));
        assert!(q.is_empty());
    }
}
