//! clock_time_get and clock_res_get: the node's view of virtual time.
//!
//! Realtime starts at a fixed epoch (2024-01-01T00:00:00Z) so a guest's
//! timestamps replay; monotonic starts at one second, never zero (Go aborts
//! with "nanotime returning zero" otherwise).
use super::errno::{self, Errno};
use super::layout::*;
use super::{mem, Cx};
use crate::clockmodel::NodeClock;
use crate::vtime::VTime;

pub const REALTIME_EPOCH_NS: u64 = 1_704_067_200 * 1_000_000_000;
pub const MONOTONIC_BASE_NS: u64 = 1_000_000_000;

/// What `clock` reads on a node whose clock model is `c`, at world time `now`.
pub fn read(clock: u32, now: VTime, c: &NodeClock) -> Result<u64, Errno> {
    let node_ns = c.node_ns(now);
    match clock {
        CLOCK_REALTIME => Ok((REALTIME_EPOCH_NS + node_ns).saturating_add_signed(c.realtime_offset_ns)),
        CLOCK_MONOTONIC | CLOCK_PROCESS_CPUTIME | CLOCK_THREAD_CPUTIME => Ok(MONOTONIC_BASE_NS + node_ns),
        _ => Err(errno::INVAL),
    }
}

/// The world time at which `clock` on that node reads `value` (now, if past).
pub fn to_vtime(clock: u32, value: u64, now: VTime, c: &NodeClock) -> Result<VTime, Errno> {
    let node_ns = match clock {
        CLOCK_REALTIME => value.saturating_sub(REALTIME_EPOCH_NS).saturating_add_signed(-c.realtime_offset_ns),
        CLOCK_MONOTONIC | CLOCK_PROCESS_CPUTIME | CLOCK_THREAD_CPUTIME => value.saturating_sub(MONOTONIC_BASE_NS),
        _ => return Err(errno::INVAL),
    };
    Ok(c.world_at(node_ns, now))
}

pub fn clock_time_get(cx: &mut Cx<'_>, clock: u32, _precision: u64, out: u32) -> Errno {
    let c = cx.world.nodes[cx.node.idx].clock;
    match read(clock, cx.world.now, &c).and_then(|v| mem::write_u64(cx.mem, out, v)) {
        Ok(()) => errno::SUCCESS,
        Err(e) => e,
    }
}

pub fn clock_res_get(cx: &mut Cx<'_>, clock: u32, out: u32) -> Errno {
    match read(clock, VTime::ZERO, &NodeClock::default()).and_then(|_| mem::write_u64(cx.mem, out, 1)) {
        Ok(()) => errno::SUCCESS,
        Err(e) => e,
    }
}
