//! WASI preview1, implemented by the simulator itself, deterministically.
//!
//! Split by concern: `args`, `clock`, `fd` (descriptors and stdio), `path`
//! (names on the simulated disk), `poll` (the suspension point), `proc`
//! (exit, yield, random), `sock` (sockets on the simulated network).
//! `link` binds them all into a wasmtime `Linker` and gives every import
//! this host does not implement a stub that returns ENOSYS and is logged once
//! in the trace: a guest never traps because of a missing host call.
//!
//! Every host call goes through [`host`], which charges the compute the guest
//! did since its last call as virtual time, and hands the call a [`Cx`]:
//! guest memory, the node's own state and the shared world.
pub(crate) mod args;
pub(crate) mod clock;
pub(crate) use crate::errno;
pub(crate) mod fd;
pub mod fdtable;
pub(crate) mod layout;
pub(crate) mod link;
pub mod mem;
pub mod mmap;
pub mod path;
pub mod poll;
pub mod proc;
pub mod sock;
pub mod threads;
pub mod work;

use crate::node::{NodeCtx, NodeLocal};
use crate::world::World;
use wasmtime::Caller;

/// What a host call sees: guest memory, its node's private state, the world.
pub struct Cx<'a> {
    pub mem: &'a mut [u8],
    pub node: &'a mut NodeLocal,
    pub world: &'a mut World,
}

impl Cx<'_> {
    /// Charges host work of this call (see [`work`]).
    pub fn charge(&mut self, kind: &'static str, units: u64) {
        self.node.work.charge(kind, units);
    }
}

/// Runs one host call: charges compute, locks the world, lends memory.
/// The call's own work (see [`work`]) is taken from the node's fuel and
/// charged as virtual time like the guest's instructions.
pub fn host<R>(caller: &mut Caller<'_, NodeCtx>, call: impl FnOnce(&mut Cx<'_>) -> R) -> R {
    let fuel_left = caller.get_fuel().expect("fuel metering is always on");
    if let Some(p) = &mut caller.data_mut().local.profile {
        p.mark.fuel_seen(fuel_left);
    }
    let new_functions = crate::node::new_functions(&mut *caller);
    let memory = caller.data().local.memory;
    let shared = caller.data().local.shared_memory.clone();
    let (result, fuel_after, quantum) = {
        let (mem, ctx): (&mut [u8], &mut NodeCtx) = match (memory, &shared) {
            (_, Some(m)) => (shared_bytes(m), caller.data_mut()),
            (Some(m), None) => m.data_and_store_mut(&mut *caller),
            (None, None) => (&mut [], caller.data_mut()),
        };
        let NodeCtx { world, local } = ctx;
        let mut world = world.lock().expect("the world lock is never poisoned: one thread per run");
        // A threaded process's descriptors and stdio, lent to this thread
        // for the call (swapped, not copied: a few pointers).
        if shared.is_some() {
            lend(&mut world.nodes[local.idx].threads, local);
        }
        let started = world.profile.then(std::time::Instant::now);
        // Coverage probes' first-entry fuel is given back: a run burns the
        // same fuel, so keeps the same virtual times, at any granularity of
        // coverage (`coverage` module docs).
        let mut refund = 0;
        if let (false, Some(cov)) = (new_functions.is_empty(), local.coverage) {
            world.note_functions(local.idx, cov.layout, &new_functions);
            refund = new_functions.len() as u64 * crate::coverage::FIRST_ENTRY_FUEL;
        }
        // Grows since the last call were charged to the node, not yet to its fuel.
        let fuel_now = (fuel_left + refund).saturating_sub(local.work.take_pending());
        world.charge_compute(local.idx, local.tid, fuel_now);
        world.host_calls += 1;
        let now = world.now;
        world.disks[local.idx].tick(now);
        let ops_before = world.disks[local.idx].ops;
        let work_before = local.work.since_block();
        let result = call(&mut Cx { mem, node: local, world: &mut world });
        local.work.call();
        let cost = local.work.since_block().saturating_sub(work_before);
        // A run the world has ended (a bound hit) stops at the guest's next
        // instruction, not at its next block: it must not keep writing.
        let fuel_after = if world.fault.is_some() { 0 } else { fuel_now.saturating_sub(cost) };
        world.charge_compute(local.idx, local.tid, fuel_after);
        let ops_after = world.disks[local.idx].ops;
        let (fds, mappings) = (&local.fds, &local.mappings);
        world.disks[local.idx].collect_orphans(|ino| fds.holds(ino) || mappings.iter().any(|m| m.ino == ino));
        if ops_after != ops_before {
            world.after_disk_ops(local.idx, ops_before, ops_after);
            world.check_memory(local.idx);
        }
        if world.nodes[local.idx].status == crate::world::Status::Crashed {
            local.crashed = true;
        }
        if world.keep_handles {
            world.nodes[local.idx].handles = local.fds.handles();
        }
        if shared.is_some() {
            lend(&mut world.nodes[local.idx].threads, local);
        }
        // A threaded guest's next preemption point, drawn (see
        // `world::threads::THREAD_QUANTUM_MAX`).
        let quantum = shared.is_some().then(|| world.draw_quantum(local.idx, local.tid));
        if let Some(t) = started {
            world.host_ns += t.elapsed().as_nanos() as u64;
        }
        (result, fuel_after, quantum)
    };
    if let Some(q) = quantum {
        // Takes effect with the `set_fuel` below.
        caller.fuel_async_yield_interval(Some(q)).expect("fuel is on");
    }
    // At zero the guest's next instruction trips the watchdog.
    caller.set_fuel(fuel_after).expect("fuel metering is always on");
    crate::node::profile_resumes(caller, fuel_after);
    result
}

/// A shared memory's bytes as one slice.
///
/// Sound here, where it would not be in general: a run is one OS thread,
/// and every other thread of this guest is parked at a host call or a fuel
/// yield while this call runs, so nothing else reads or writes the memory
/// meanwhile; and the slice does not outlive the call.
fn shared_bytes<'a>(m: &wasmtime::SharedMemory) -> &'a mut [u8] {
    let data = m.data();
    // SAFETY: see above; `UnsafeCell<u8>` has the layout of `u8`, and a
    // shared memory's base never moves (it is reserved to its maximum).
    unsafe { std::slice::from_raw_parts_mut(std::cell::UnsafeCell::raw_get(data.as_ptr()), data.len()) }
}

/// Swaps a threaded process's shared state between the world (between
/// calls) and the calling thread's `NodeLocal` (during one): called before
/// and after every host call of a threaded guest.
fn lend(threads: &mut crate::world::threads::NodeThreads, local: &mut NodeLocal) {
    let shared = threads.shared.get_or_insert_with(Default::default);
    std::mem::swap(&mut shared.fds, &mut local.fds);
    std::mem::swap(&mut shared.mappings, &mut local.mappings);
    std::mem::swap(&mut shared.stdio_flags, &mut local.stdio_flags);
    std::mem::swap(&mut shared.stdout, &mut local.stdout);
    std::mem::swap(&mut shared.stderr, &mut local.stderr);
    std::mem::swap(&mut shared.antithesis, &mut local.antithesis);
}
