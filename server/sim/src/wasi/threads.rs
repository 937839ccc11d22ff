//! Guest threads' host calls: `wasi::thread-spawn`, and the futex the
//! module's `memory.atomic.wait32`/`wait64`/`notify` become once rewritten
//! into calls of `seedfall_threads::*` (`crate::threads::rewrite`): a wait blocks
//! the calling thread's fiber, not the run's one OS thread.
//!
//! Semantics are the threads proposal's: a wait whose value differs
//! returns 1 at once, a zero timeout returns 2 at once, a negative one waits
//! for ever; a notify wakes up to `count` waiters first come first and says
//! how many. A misaligned or out-of-bounds address traps.
use super::{host, Cx};
use crate::node::NodeCtx;
use crate::world::threads::SPAWN_FAILED;
use wasmtime::{Caller, Linker, Trap};

use crate::threads::{MODULE as FUTEX_MODULE, NOTIFY, SPAWN, SPAWN_LEGACY, SPAWN_MODULE, WAIT32, WAIT64, WAIT_NOT_EQUAL, WAIT_TIMED_OUT, WAIT_WOKEN};

/// Binds the thread calls into the linker every node uses.
pub fn link(l: &mut Linker<NodeCtx>) -> wasmtime::Result<()> {
    for name in [SPAWN, SPAWN_LEGACY] {
        l.func_wrap(SPAWN_MODULE, name, |mut caller: Caller<'_, NodeCtx>, start_arg: i32| -> wasmtime::Result<i32> {
            let tid = host(&mut caller, |cx| spawn(cx, start_arg as u32));
            crate::traps::crashed(&caller)?;
            Ok(tid)
        })?;
    }
    l.func_wrap_async(FUTEX_MODULE, WAIT32, |mut caller: Caller<'_, NodeCtx>, (addr, expected, timeout, offset): (i32, i32, i64, i32)| {
        Box::new(async move { wait(&mut caller, address(addr, offset), Expected::U32(expected as u32), timeout).await })
    })?;
    l.func_wrap_async(FUTEX_MODULE, WAIT64, |mut caller: Caller<'_, NodeCtx>, (addr, expected, timeout, offset): (i32, i64, i64, i32)| {
        Box::new(async move { wait(&mut caller, address(addr, offset), Expected::U64(expected as u64), timeout).await })
    })?;
    l.func_wrap(FUTEX_MODULE, NOTIFY, |mut caller: Caller<'_, NodeCtx>, addr: i32, count: i32, offset: i32| -> wasmtime::Result<i32> {
        let r = host(&mut caller, |cx| notify(cx, address(addr, offset), count as u32));
        crate::traps::crashed(&caller)?;
        Ok(r?)
    })?;
    Ok(())
}

/// The effective address of an atomic access: both operands unsigned.
fn address(addr: i32, offset: i32) -> u64 {
    u64::from(addr as u32) + u64::from(offset as u32)
}

fn spawn(cx: &mut Cx<'_>, start_arg: u32) -> i32 {
    let idx = cx.node.idx;
    match cx.world.nodes[idx].threads.spawn(start_arg) {
        Some(tid) => tid as i32,
        None => SPAWN_FAILED,
    }
}

#[derive(Clone, Copy)]
enum Expected {
    U32(u32),
    U64(u64),
}

impl Expected {
    fn width(self) -> u64 {
        match self {
            Expected::U32(_) => 4,
            Expected::U64(_) => 8,
        }
    }
}

/// Checks an atomic access at `ea` of `width` bytes.
fn check(cx: &Cx<'_>, ea: u64, width: u64) -> Result<usize, Trap> {
    if ea % width != 0 {
        return Err(Trap::HeapMisaligned);
    }
    if ea.checked_add(width).is_none_or(|end| end > cx.mem.len() as u64) {
        return Err(Trap::MemoryOutOfBounds);
    }
    Ok(ea as usize)
}

enum Plan {
    Now(i32),
    Wait { deadline: Option<crate::vtime::VTime> },
}

async fn wait(caller: &mut Caller<'_, NodeCtx>, ea: u64, expected: Expected, timeout: i64) -> wasmtime::Result<i32> {
    let plan = host(caller, |cx| -> Result<Plan, Trap> {
        let at = check(cx, ea, expected.width())?;
        let equal = match expected {
            Expected::U32(v) => u32::from_le_bytes(cx.mem[at..at + 4].try_into().unwrap()) == v,
            Expected::U64(v) => u64::from_le_bytes(cx.mem[at..at + 8].try_into().unwrap()) == v,
        };
        if !equal {
            return Ok(Plan::Now(WAIT_NOT_EQUAL));
        }
        if timeout == 0 {
            return Ok(Plan::Now(WAIT_TIMED_OUT));
        }
        // A relative timeout on the node's clock, as poll_oneoff's.
        let deadline = (timeout > 0).then(|| {
            let (c, now) = (cx.world.nodes[cx.node.idx].clock, cx.world.now);
            c.world_at(c.node_ns(now).saturating_add(timeout as u64), now)
        });
        Ok(Plan::Wait { deadline })
    });
    crate::traps::crashed(caller)?;
    let deadline = match plan? {
        Plan::Now(r) => return Ok(r),
        Plan::Wait { deadline } => deadline,
    };
    // Queued at the address under the wait `suspend` is about to begin
    // (the thread's next wait id), so a notify can tell which wait it ends.
    let (idx, tid) = (caller.data().local.idx, caller.data().local.tid);
    let wait_id = host(caller, |cx| {
        let node = &mut cx.world.nodes[idx];
        let next = node.threads.next_wait_id(tid, node.wait_id + 1);
        node.threads.futex.entry(ea).or_default().push_back((tid, next));
        next
    });
    super::poll::suspend(caller, deadline, false).await?;
    let notified = host(caller, |cx| cx.world.nodes[idx].threads.wait_ended(ea, tid, wait_id));
    crate::traps::crashed(caller)?;
    Ok(if notified { WAIT_WOKEN } else { WAIT_TIMED_OUT })
}

fn notify(cx: &mut Cx<'_>, ea: u64, count: u32) -> Result<i32, Trap> {
    check(cx, ea, 4)?;
    let idx = cx.node.idx;
    let woken = cx.world.nodes[idx].threads.notify(ea, count);
    for &(tid, wait_id) in &woken {
        cx.world.wake(idx, tid, wait_id);
    }
    Ok(woken.len() as i32)
}
