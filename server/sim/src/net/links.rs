//! Links and partitions: the latency a segment takes from host to host,
//! and the directed links a partition cuts until its heal (which resumes
//! the pipes that stalled at a cut).
use super::{Effects, Net, NetEvent, SockId};
use crate::config::LatencyDistribution;
use crate::streams::{Stream, Streams};
use crate::vtime::VTime;

/// Loopback inside a node takes this long, and draws nothing.
pub const LOOPBACK_NS: u64 = 5_000;

impl Net {
    /// The one-way latency of a segment from `from` to `to`, from the `net`
    /// stream (loopback draws nothing). Integer arithmetic only, so every
    /// machine draws the same.
    pub(super) fn latency(&self, streams: &mut Streams, from: usize, to: usize) -> u64 {
        if from == to {
            return LOOPBACK_NS;
        }
        let range = self.config.latency;
        if self.config.distribution == LatencyDistribution::LongTail && streams.below(Stream::Net, 16) == 0 {
            let max = range.max_ns.max(1);
            return max + streams.below(Stream::Net, 9 * max + 1);
        }
        range.draw(streams, Stream::Net)
    }

    pub(super) fn link_cut(&self, from: usize, to: usize) -> bool {
        from != to && self.cuts.get(&(from, to)).is_some_and(|n| *n > 0)
    }

    /// Cuts the links of a partition; returns its id (for the heal event).
    pub fn partition(&mut self, links: Vec<(usize, usize)>) -> u64 {
        let id = self.next_partition;
        self.next_partition += 1;
        for l in &links {
            *self.cuts.entry(*l).or_insert(0) += 1;
        }
        self.partitions.insert(id, links);
        id
    }

    pub(super) fn heal(&mut self, id: u64, now: VTime, streams: &mut Streams, fx: &mut Effects) {
        let Some(links) = self.partitions.remove(&id) else { return };
        for l in &links {
            if let Some(n) = self.cuts.get_mut(l) {
                *n -= 1;
                if *n == 0 {
                    self.cuts.remove(l);
                }
            }
        }
        // Stalled pipes whose link is whole again resume after a fresh latency.
        let stalled: Vec<SockId> = self.socks.iter().filter(|(_, s)| s.stalled).map(|(id, _)| *id).collect();
        for sid in stalled {
            let s = &self.socks[&sid];
            let owner = s.owner;
            let to = s.peer_link().and_then(|p| self.socks.get(&p)).map(|p| p.owner);
            if to.is_some_and(|to| self.link_cut(owner, to)) {
                continue;
            }
            let lat = self.latency(streams, owner, to.unwrap_or(owner));
            let s = self.socks.get_mut(&sid).expect("present");
            s.stalled = false;
            let at = now + lat;
            for f in s.pipe.iter_mut() {
                f.at = f.at.max(at);
            }
            fx.events.push((at, NetEvent::Deliver { from: sid }));
        }
    }
}
