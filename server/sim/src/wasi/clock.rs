//! clock_time_get and clock_res_get: the node's view of virtual time.
//!
//! Realtime starts at a fixed epoch (2024-01-01T00:00:00Z) so a guest's
//! timestamps replay; monotonic starts at one second, never zero (Go aborts
//! with "nanotime returning zero" otherwise).
use super::errno::{self, Errno};
use super::layout::*;
use super::{mem, Cx};
use crate::vtime::VTime;

pub const REALTIME_EPOCH_NS: u64 = 1_704_067_200 * 1_000_000_000;
pub const MONOTONIC_BASE_NS: u64 = 1_000_000_000;

pub fn read(clock: u32, now: VTime) -> Result<u64, Errno> {
    match clock {
        CLOCK_REALTIME => Ok(REALTIME_EPOCH_NS + now.nanos()),
        CLOCK_MONOTONIC | CLOCK_PROCESS_CPUTIME | CLOCK_THREAD_CPUTIME => Ok(MONOTONIC_BASE_NS + now.nanos()),
        _ => Err(errno::INVAL),
    }
}

/// The virtual time at which `clock` reads `value` (saturating at zero).
pub fn to_vtime(clock: u32, value: u64) -> Result<VTime, Errno> {
    match clock {
        CLOCK_REALTIME => Ok(VTime(value.saturating_sub(REALTIME_EPOCH_NS))),
        CLOCK_MONOTONIC | CLOCK_PROCESS_CPUTIME | CLOCK_THREAD_CPUTIME => Ok(VTime(value.saturating_sub(MONOTONIC_BASE_NS))),
        _ => Err(errno::INVAL),
    }
}

pub fn clock_time_get(cx: &mut Cx<'_>, clock: u32, _precision: u64, out: u32) -> Errno {
    match read(clock, cx.world.now).and_then(|v| mem::write_u64(cx.mem, out, v)) {
        Ok(()) => errno::SUCCESS,
        Err(e) => e,
    }
}

pub fn clock_res_get(cx: &mut Cx<'_>, clock: u32, out: u32) -> Errno {
    match read(clock, VTime::ZERO).and_then(|_| mem::write_u64(cx.mem, out, 1)) {
        Ok(()) => errno::SUCCESS,
        Err(e) => e,
    }
}
