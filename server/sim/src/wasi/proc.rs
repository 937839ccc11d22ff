//! proc_exit, proc_raise, sched_yield and random_get.
use super::errno::{self, Errno};
use super::{host, mem, poll, Cx};
use crate::node::NodeCtx;
use crate::streams::Stream;
use wasmtime::Caller;

/// Virtual time a `sched_yield` gives away. Go reaches `sched_yield` from
/// loops such as os/signal's: if yielding did not let time pass, timers in
/// that node would never fire.
pub const SCHED_YIELD_NS: u64 = 50_000;

/// Carried out of the guest as a wasmtime error and recovered by the scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcExit(pub i32);

impl std::fmt::Display for ProcExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "proc_exit({})", self.0)
    }
}

impl std::error::Error for ProcExit {}

/// Bound on one `random_get`: more is EINVAL.
pub const RANDOM_BYTES_MAX: u32 = 1 << 20;

pub fn random_get(cx: &mut Cx<'_>, buf: u32, len: u32) -> Errno {
    if len > RANDOM_BYTES_MAX {
        return errno::INVAL;
    }
    // ChaCha makes a byte slower than a copy moves one.
    cx.charge("random_get", super::work::bytes(u64::from(len)) * super::work::RANDOM_PER_COPY);
    match mem::bytes_mut(cx.mem, buf, len) {
        Ok(out) => {
            cx.world.streams.fill(Stream::Random, out);
            errno::SUCCESS
        }
        Err(e) => e,
    }
}

pub async fn sched_yield(caller: &mut Caller<'_, NodeCtx>) -> wasmtime::Result<i32> {
    let deadline = host(caller, |cx| cx.world.now + SCHED_YIELD_NS);
    poll::suspend(caller, Some(deadline), false).await?;
    Ok(i32::from(errno::SUCCESS))
}
