//! poll_oneoff: the suspension point of a node.
//!
//! A poll whose subscriptions are ready now (timeout-0 clocks, descriptors
//! of files and stdio) answers at once without a scheduler switch: Go polls
//! with timeout 0 often. Otherwise the node blocks until the earliest clock
//! deadline, and then reports every subscription ready at that moment. A poll
//! never returns zero events without virtual time passing (Go would spin).
use super::errno::{self, Errno};
use super::fdtable::Fd;
use super::layout::*;
use super::{clock, host, mem, Cx};
use crate::node::NodeCtx;
use crate::vtime::VTime;
use std::future::poll_fn;
use std::task::Poll;
use wasmtime::Caller;

/// Bound on subscriptions per call.
pub const SUBSCRIPTIONS_MAX: u32 = 4096;

enum Sub {
    Clock { userdata: u64, deadline: VTime },
    Fd { userdata: u64, kind: u8, fd: u32 },
}

enum Plan {
    Done(Errno),
    /// Block until the deadline; the parsed subscriptions keep the deadlines
    /// computed at the call (relative timeouts count from then, not from the wake).
    Wait(Vec<Sub>, Option<VTime>),
}

fn read_subs(cx: &mut Cx<'_>, ptr: u32, count: u32) -> Result<Vec<Sub>, Errno> {
    if count == 0 || count > SUBSCRIPTIONS_MAX {
        return Err(errno::INVAL);
    }
    let mut subs = Vec::with_capacity(count as usize);
    cx.charge("poll_oneoff subscriptions", u64::from(count) * super::work::PER_SUBSCRIPTION);
    for i in 0..count {
        let at = ptr.checked_add(i * SUBSCRIPTION_SIZE).ok_or(errno::FAULT)?;
        let raw = mem::bytes(cx.mem, at, SUBSCRIPTION_SIZE)?;
        let userdata = u64::from_le_bytes(raw[0..8].try_into().unwrap());
        let tag = raw[8];
        let sub = match tag {
            EVENTTYPE_CLOCK => {
                let id = u32::from_le_bytes(raw[16..20].try_into().unwrap());
                let timeout = u64::from_le_bytes(raw[24..32].try_into().unwrap());
                let flags = u16::from_le_bytes(raw[40..42].try_into().unwrap());
                let c = cx.world.nodes[cx.node.idx].clock;
                let now = cx.world.now;
                let deadline = if flags & SUBCLOCKFLAGS_ABSTIME != 0 {
                    clock::to_vtime(id, timeout, now, &c)?
                } else {
                    clock::read(id, now, &c)?;
                    c.world_at(c.node_ns(now).saturating_add(timeout), now)
                };
                Sub::Clock { userdata, deadline }
            }
            EVENTTYPE_FD_READ | EVENTTYPE_FD_WRITE => {
                let fd = u32::from_le_bytes(raw[16..20].try_into().unwrap());
                Sub::Fd { userdata, kind: tag, fd }
            }
            _ => return Err(errno::INVAL),
        };
        subs.push(sub);
    }
    Ok(subs)
}

/// Whether an fd subscription is ready, and with what error and byte count.
/// Files and stdio are always ready; a socket when the network says so.
fn fd_readiness(cx: &Cx<'_>, kind: u8, fd: u32) -> Option<(Errno, u64)> {
    match cx.node.fds.get(fd) {
        Err(e) => Some((e, 0)),
        Ok(Fd::File(f)) if kind == EVENTTYPE_FD_READ => {
            let size = cx.world.disks[cx.node.idx].inode(f.ino).map(|i| i.size()).unwrap_or(0);
            Some((errno::SUCCESS, size.saturating_sub(f.offset)))
        }
        Ok(Fd::Socket(s)) => {
            let r = cx.world.net.readiness(s.id);
            match kind {
                EVENTTYPE_FD_READ if r.read => Some((errno::SUCCESS, r.bytes)),
                EVENTTYPE_FD_WRITE if r.write => Some((errno::SUCCESS, 0)),
                _ => None,
            }
        }
        Ok(_) => Some((errno::SUCCESS, 0)),
    }
}

/// Writes an event for every ready subscription; returns how many.
fn deliver(cx: &mut Cx<'_>, subs: &[Sub], out: u32) -> Result<u32, Errno> {
    let now = cx.world.now;
    let mut n = 0u32;
    for sub in subs {
        let (userdata, kind, err, nbytes) = match *sub {
            Sub::Clock { userdata, deadline } if deadline <= now => (userdata, EVENTTYPE_CLOCK, errno::SUCCESS, 0),
            Sub::Clock { .. } => continue,
            Sub::Fd { userdata, kind, fd } => match fd_readiness(cx, kind, fd) {
                Some((err, nbytes)) => (userdata, kind, err, nbytes),
                None => continue,
            },
        };
        let at = n.checked_mul(EVENT_SIZE).and_then(|o| out.checked_add(o)).ok_or(errno::FAULT)?;
        mem::bytes_mut(cx.mem, at, EVENT_SIZE)?.fill(0);
        mem::write_u64(cx.mem, at, userdata)?;
        mem::write_u16(cx.mem, mem::at(at, 8)?, err)?;
        mem::write_u8(cx.mem, mem::at(at, 10)?, kind)?;
        mem::write_u64(cx.mem, mem::at(at, 16)?, nbytes)?;
        n += 1;
    }
    Ok(n)
}

fn plan(cx: &mut Cx<'_>, subs_ptr: u32, out: u32, count: u32, nevents: u32) -> Plan {
    let subs = match read_subs(cx, subs_ptr, count) {
        Ok(s) => s,
        Err(e) => return Plan::Done(e),
    };
    if mem::range(cx.mem.len(), out, count * EVENT_SIZE).is_err() {
        return Plan::Done(errno::FAULT);
    }
    match deliver(cx, &subs, out) {
        Err(e) => Plan::Done(e),
        Ok(0) => {
            let deadline = subs.iter().filter_map(|s| match s {
                Sub::Clock { deadline, .. } => Some(*deadline),
                Sub::Fd { .. } => None,
            }).min();
            Plan::Wait(subs, deadline)
        }
        Ok(n) => Plan::Done(mem::write_u32(cx.mem, nevents, n).err().unwrap_or(errno::SUCCESS)),
    }
}

/// Bound on wake-ups of one poll that find nothing ready (network activity
/// for another socket of the node): past it the run fails as stuck.
pub const POLL_REWAITS_MAX: u32 = 1_000_000;

pub async fn poll_oneoff(caller: &mut Caller<'_, NodeCtx>, subs: u32, out: u32, count: u32, nevents: u32) -> wasmtime::Result<i32> {
    let (parsed, deadline) = match host(caller, |cx| plan(cx, subs, out, count, nevents)) {
        Plan::Done(e) => return Ok(i32::from(e)),
        Plan::Wait(parsed, deadline) => (parsed, deadline),
    };
    let wants_net = parsed.iter().any(|s| matches!(s, Sub::Fd { .. }));
    for _ in 0..POLL_REWAITS_MAX {
        suspend(caller, deadline, wants_net).await?;
        let result = host(caller, |cx| {
            let n = deliver(cx, &parsed, out)?;
            if n == 0 {
                // Woken by activity on a socket this poll does not watch.
                assert!(wants_net, "a node woke from poll_oneoff with nothing ready");
                return Ok(false);
            }
            mem::write_u32(cx.mem, nevents, n).map(|_| true)
        });
        match result {
            Ok(false) => continue,
            Ok(true) => return Ok(i32::from(errno::SUCCESS)),
            Err(e) => return Ok(i32::from(e)),
        }
    }
    host(caller, |cx| cx.world.fault.get_or_insert_with(|| format!("a poll_oneoff woke {POLL_REWAITS_MAX} times with nothing ready")).clone());
    Ok(i32::from(errno::INTR))
}

/// Blocks the calling node until the world wakes it (at `deadline`, or by
/// another event; with `wants_net`, by activity on its sockets). Resets the
/// watchdog: blocking is progress.
pub async fn suspend(caller: &mut Caller<'_, NodeCtx>, deadline: Option<VTime>, wants_net: bool) -> wasmtime::Result<()> {
    let (idx, tid) = (caller.data().local.idx, caller.data().local.tid);
    let world_handle = caller.data().world.clone();
    let (budget, wait_id) = {
        let mut world = world_handle.lock().unwrap();
        crate::node::harvest_coverage(&mut *caller, idx, &mut world);
        let wait_id = world.block(idx, tid, deadline, wants_net);
        (world.limits.watchdog_instructions, wait_id)
    };
    caller.set_fuel(budget)?;
    caller.data_mut().local.work.reset();
    let world = caller.data().world.clone();
    poll_fn(|_| if world.lock().unwrap().waiting(idx, tid, wait_id) { Poll::Pending } else { Poll::Ready(()) }).await;
    crate::node::profile_resumes(caller, budget);
    Ok(())
}
