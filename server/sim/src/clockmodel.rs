//! A node's view of time: its clocks can run fast or slow (skew) and its
//! realtime clock can step (jump), while the world's virtual time is the
//! single truth every event is ordered by.
//!
//! Node time is piecewise linear in world time: from `anchor_world` on it
//! advances `rate_ppm` millionths of a nanosecond per world nanosecond.
use crate::vtime::VTime;

pub const RATE_ONE_PPM: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeClock {
    anchor_world: u64,
    anchor_node: u64,
    pub rate_ppm: u64,
    /// Added to realtime only (jumps); monotonic never goes backwards.
    pub realtime_offset_ns: i64,
}

impl Default for NodeClock {
    fn default() -> Self {
        NodeClock { anchor_world: 0, anchor_node: 0, rate_ppm: RATE_ONE_PPM, realtime_offset_ns: 0 }
    }
}

impl NodeClock {
    /// Node nanoseconds since the start, at world time `now`.
    pub fn node_ns(&self, now: VTime) -> u64 {
        let dt = now.nanos().saturating_sub(self.anchor_world) as u128;
        self.anchor_node + (dt * self.rate_ppm as u128 / RATE_ONE_PPM as u128) as u64
    }

    /// The earliest world time at which node time reaches `node_ns`.
    pub fn world_at(&self, node_ns: u64, now: VTime) -> VTime {
        if node_ns <= self.node_ns(now) {
            return now;
        }
        let dn = (node_ns - self.anchor_node) as u128;
        let dt = (dn * RATE_ONE_PPM as u128).div_ceil(self.rate_ppm.max(1) as u128);
        VTime(self.anchor_world.saturating_add(dt.min(u64::MAX as u128) as u64))
    }

    /// From `now` on, node time runs at `rate_ppm`.
    pub fn set_rate(&mut self, now: VTime, rate_ppm: u64) {
        assert!(rate_ppm > 0, "a clock cannot stop");
        self.anchor_node = self.node_ns(now);
        self.anchor_world = now.nanos();
        self.rate_ppm = rate_ppm;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skew_is_piecewise_and_invertible() {
        let mut c = NodeClock::default();
        assert_eq!(c.node_ns(VTime(1000)), 1000);
        c.set_rate(VTime(1000), 1_100_000);
        assert_eq!(c.node_ns(VTime(2000)), 2100);
        assert_eq!(c.world_at(2100, VTime(1500)), VTime(2000));
        assert_eq!(c.world_at(10, VTime(1500)), VTime(1500), "a past node time is now");
        c.set_rate(VTime(2000), RATE_ONE_PPM);
        assert_eq!(c.node_ns(VTime(3000)), 3100);
    }
}
