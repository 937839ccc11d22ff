//! The scheduler: drives every node instance's fiber on one thread.
//!
//! Each node instance is a `call_async` future of its `_start`. A step picks
//! one runnable node (the `sched` stream decides among several) and polls its
//! future once: the guest runs until it blocks in a host call (poll_oneoff,
//! sched_yield), or its fuel quantum ends (a deterministic preemption point).
//! When nothing is runnable, the clock jumps to the next event.
use crate::failure::{self, Failure, FailureKind};
use crate::node::{NodeCtx, NodeLocal};
use crate::outcome::EndReason;
use crate::streams::Stream;
use crate::trace::EventKind;
use crate::vtime::VTime;
use crate::wasi::proc::ProcExit;
use crate::events::Event;
use crate::world::{Status, World};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use wasmtime::{InstancePre, Store, Trap};

/// Instructions a node runs before the scheduler may switch to another node.
pub const FUEL_QUANTUM: u64 = 100_000;

type NodeFuture = Pin<Box<dyn Future<Output = wasmtime::Result<()>> + Send>>;

pub struct Scheduler {
    world: Arc<Mutex<World>>,
    /// Each node instance's main thread (`_start`).
    futures: Vec<Option<NodeFuture>>,
    /// Each node instance's spawned threads, by tid (wasi-threads guests).
    threads: Vec<std::collections::BTreeMap<u32, NodeFuture>>,
    /// Per threaded node instance, its incarnation's linked module and
    /// shared memory: what a spawned thread is instantiated from.
    procs: Vec<Option<(InstancePre<NodeCtx>, wasmtime::SharedMemory)>>,
    /// How to start each node instance again after a crash.
    launches: Vec<Launch>,
    pub instantiate_ns: Arc<Mutex<u64>>,
    /// Every node instance's stacks are sampled into this (`guest_profile`).
    pub profile: Option<Arc<Mutex<crate::guest_profile::GuestProfile>>>,
}

/// What a node instance is instantiated from.
#[derive(Clone)]
pub enum LaunchModule {
    /// Linked once for every run (a module with its own memory).
    Pre(InstancePre<NodeCtx>),
    /// Linked at every start against a new shared memory: a module that
    /// imports one (`wasm32-wasip1-threads`).
    Threaded(Arc<crate::program::Threaded>),
}

struct Launch {
    engine: wasmtime::Engine,
    module: LaunchModule,
    coverage: Option<crate::coverage::Layout>,
    args: Vec<String>,
    env: Vec<(String, String)>,
    memory_bytes_max: u64,
}

impl Scheduler {
    pub fn new(world: Arc<Mutex<World>>) -> Scheduler {
        Scheduler { world, futures: Vec::new(), threads: Vec::new(), procs: Vec::new(), launches: Vec::new(), instantiate_ns: Arc::default(), profile: None }
    }

    /// Adds a node instance; it becomes runnable at the current time.
    #[allow(clippy::too_many_arguments)]
    pub fn add(&mut self, engine: &wasmtime::Engine, module: LaunchModule, coverage: Option<crate::coverage::Layout>, args: Vec<String>, env: Vec<(String, String)>, memory_bytes_max: u64) {
        let idx = self.futures.len();
        self.launches.push(Launch { engine: engine.clone(), module, coverage, args, env, memory_bytes_max });
        self.futures.push(None);
        self.threads.push(Default::default());
        self.procs.push(None);
        self.launch(idx);
        self.world.lock().unwrap().record(Some(idx), EventKind::Start);
    }

    /// A store for thread `tid` of node `idx`, fuelled, limited, sampled
    /// when profiling.
    fn store(&self, idx: usize, tid: u32) -> Store<NodeCtx> {
        let l = &self.launches[idx];
        let (budget, meter, name) = {
            let w = self.world.lock().unwrap();
            (w.limits.watchdog_instructions, w.meter.clone(), w.nodes[idx].name.clone())
        };
        let mut local = NodeLocal::new(idx, &name, &l.args, &l.env, l.memory_bytes_max, budget, meter);
        local.tid = tid;
        let mut store = Store::new(&l.engine, NodeCtx { world: self.world.clone(), local });
        store.limiter(|ctx| &mut ctx.local);
        store.set_fuel(budget).expect("fuel is on");
        store.fuel_async_yield_interval(Some(FUEL_QUANTUM)).expect("fuel is on");
        if let Some(profile) = &self.profile {
            let mut mark = crate::guest_profile::Mark::default();
            mark.fuel_set(budget);
            store.data_mut().local.profile = Some(crate::node::ProfileSink { profile: profile.clone(), mark });
            store.epoch_deadline_callback(|cx| {
                crate::node::profile_sample(cx);
                Ok(wasmtime::UpdateDeadline::Continue(1))
            });
            store.set_epoch_deadline(1);
        }
        store
    }

    /// Puts a thread's store on its incarnation's shared memory, with a
    /// drawn first quantum (`World::draw_quantum`).
    fn share(&self, store: &mut Store<NodeCtx>, idx: usize, tid: u32, shared: wasmtime::SharedMemory) {
        store.data_mut().local.shared_memory = Some(shared);
        let q = self.world.lock().unwrap().draw_quantum(idx, tid);
        store.fuel_async_yield_interval(Some(q)).expect("fuel is on");
    }

    /// A fresh instance of node `idx` (its disk is whatever the world holds).
    fn launch(&mut self, idx: usize) {
        {
            let mut w = self.world.lock().unwrap();
            // A new instance starts with no descriptor of the last one's.
            w.nodes[idx].handles.clear();
            w.nodes[idx].threads.clear();
        }
        self.end_threads(idx);
        let mut store = self.store(idx, 0);
        let pre = match self.launches[idx].module.clone() {
            LaunchModule::Pre(pre) => pre,
            LaunchModule::Threaded(t) => {
                let l = &self.launches[idx];
                match t.link(&l.engine, &store, l.memory_bytes_max) {
                    Ok((pre, shared)) => {
                        self.world.lock().unwrap().nodes[idx].threads.threaded = true;
                        self.procs[idx] = Some((pre.clone(), shared.clone()));
                        self.share(&mut store, idx, 0, shared);
                        pre
                    }
                    Err(e) => {
                        self.futures[idx] = Some(Box::pin(async move { Err(e) }));
                        return;
                    }
                }
            }
        };
        let l = &self.launches[idx];
        let coverage = l.coverage;
        let instantiate_ns = self.instantiate_ns.clone();
        self.futures[idx] = Some(Box::pin(async move {
            let started = std::time::Instant::now();
            let instance = pre.instantiate_async(&mut store).await?;
            *instantiate_ns.lock().unwrap() += started.elapsed().as_nanos() as u64;
            let memory = instance.get_memory(&mut store, "memory");
            store.data_mut().local.memory = memory;
            if let Some(layout) = coverage {
                let memory = instance.get_memory(&mut store, crate::coverage::COVERAGE_EXPORT).expect("an instrumented module exports its coverage memory");
                store.data_mut().local.coverage = Some(crate::node::CoverageReader { memory, layout, read: 0 });
            }
            let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
            let result = start.call_async(&mut store, ()).await;
            {
                let world = store.data().world.clone();
                let mut w = world.lock().unwrap();
                crate::node::harvest_coverage(&mut store, idx, &mut w);
                if result.is_err() {
                    // What the node was doing, for a watchdog failure; grows
                    // not yet charged pass on the clock.
                    let pending = store.data_mut().local.work.take_pending();
                    w.charge_quantum(idx, 0, pending);
                    // Named only when host work is a real part of it.
                    let work = &store.data().local.work;
                    if work.since_block().saturating_mul(10) >= w.limits.watchdog_instructions {
                        w.nodes[idx].work_summary = work.summary();
                    }
                }
            }
            if !store.data().local.crashed {
                flush_output(store.data_mut());
            }
            result
        }));
    }

    /// Starts thread `tid` of node `idx` (spawned in the step just run):
    /// a new instance of its module on the incarnation's shared memory,
    /// entered at `wasi_thread_start(tid, start_arg)`.
    fn start_thread(&mut self, idx: usize, tid: u32, start_arg: u32) {
        let (pre, shared) = self.procs[idx].clone().expect("only a threaded incarnation spawns");
        let mut store = self.store(idx, tid);
        self.share(&mut store, idx, tid, shared);
        let coverage = self.launches[idx].coverage;
        let instantiate_ns = self.instantiate_ns.clone();
        self.threads[idx].insert(
            tid,
            Box::pin(async move {
                let started = std::time::Instant::now();
                let instance = pre.instantiate_async(&mut store).await?;
                *instantiate_ns.lock().unwrap() += started.elapsed().as_nanos() as u64;
                if let Some(layout) = coverage {
                    let memory = instance.get_memory(&mut store, crate::coverage::COVERAGE_EXPORT).expect("an instrumented module exports its coverage memory");
                    store.data_mut().local.coverage = Some(crate::node::CoverageReader { memory, layout, read: 0 });
                }
                let start = instance.get_typed_func::<(i32, i32), ()>(&mut store, crate::threads::THREAD_START)?;
                let result = start.call_async(&mut store, (tid as i32, start_arg as i32)).await;
                let world = store.data().world.clone();
                crate::node::harvest_coverage(&mut store, idx, &mut world.lock().unwrap());
                result
            }),
        );
    }

    /// Every thread of node `idx` ends with its process (an exit, a
    /// failure): their stores go, with the world unlocked.
    fn end_threads(&mut self, idx: usize) {
        self.threads[idx].clear();
        self.procs[idx] = None;
    }

    /// Fires due events; returns the nodes to drop and to restart (done by
    /// the caller with the world unlocked: dropping a store may unwind a
    /// fiber that takes the lock).
    fn fire_events(w: &mut World) -> (Vec<usize>, Vec<usize>) {
        let mut restarts = Vec::new();
        let now = w.now;
        while let Some(ev) = w.events.pop_due(now) {
            match ev {
                Event::Wake { node_idx, tid, wait_id } => w.wake(node_idx, tid, wait_id),
                Event::Fault { plan_idx } => w.apply_planned(plan_idx),
                Event::Restart { node_idx, generation } => {
                    let n = &mut w.nodes[node_idx];
                    if n.status == Status::Crashed && n.generation == generation {
                        n.status = Status::Runnable;
                        n.wait_id += 1;
                        n.fuel_charged = 0;
                        restarts.push(node_idx);
                    }
                }
                Event::Resume { node_idx } => {
                    let n = &mut w.nodes[node_idx];
                    if n.paused_until.is_some_and(|u| u <= now) {
                        n.paused_until = None;
                    }
                }
                Event::SkewEnd { node_idx, skew_id } => w.end_skew(node_idx, skew_id),
                Event::Net(ev) => w.net_event(ev),
            }
        }
        (std::mem::take(&mut w.crashed_now), restarts)
    }

    fn drop_and_restart(&mut self, drops: Vec<usize>, restarts: Vec<usize>) {
        for idx in drops {
            self.futures[idx] = None;
            self.end_threads(idx);
        }
        for idx in restarts {
            self.launch(idx);
            self.world.lock().unwrap().record(Some(idx), EventKind::Restart);
        }
    }

    /// Runs steps until the run ends. Between steps, where branches due
    /// apply, `pause` may stop the run a while (a snapshot); it sees the
    /// world once more as the run ends, before any instance is dropped.
    pub fn drive(&mut self, duration: VTime, mut pause: Option<&mut dyn crate::snapshot::Pause>) -> (EndReason, Option<Failure>) {
        let end = self.steps(duration, pause.as_deref_mut());
        if let Some(p) = pause {
            p.ended(&mut self.world.lock().unwrap());
        }
        end
    }

    fn steps(&mut self, duration: VTime, mut pause: Option<&mut (dyn crate::snapshot::Pause + '_)>) -> (EndReason, Option<Failure>) {
        let mut cx = Context::from_waker(Waker::noop());
        let mut runnable: Vec<usize> = Vec::with_capacity(self.futures.len());
        let mut tids: Vec<u32> = Vec::new();
        loop {
            let (drops, restarts) = {
                let mut w = self.world.lock().unwrap();
                if let Some(end) = check_end(&mut w, duration) {
                    return end;
                }
                if let Some(p) = pause.as_deref_mut() {
                    let mut pauses = 0;
                    while p.due(&w) {
                        pauses += 1;
                        assert!(pauses <= crate::snapshot::PAUSES_AT_ONCE_MAX, "a pause stays due after it was reached");
                        p.reached(&mut w);
                    }
                }
                w.apply_due_branches();
                Self::fire_events(&mut w)
            };
            if !drops.is_empty() || !restarts.is_empty() {
                self.drop_and_restart(drops, restarts);
            }
            if let Some(p) = pause.as_deref_mut() {
                p.looked(&mut self.world.lock().unwrap());
            }
            let pick = {
                let mut w = self.world.lock().unwrap();
                let now = w.now;
                runnable.clear();
                runnable.extend(w.nodes.iter().enumerate().filter(|(_, n)| n.schedulable(now)).map(|(i, _)| i));
                if runnable.is_empty() {
                    match w.events.next_time() {
                        None => return (EndReason::Idle, None),
                        Some(t) if t >= duration => {
                            w.now = w.now.max(duration);
                            return (EndReason::Duration, None);
                        }
                        Some(t) => {
                            w.now = w.now.max(t);
                            continue;
                        }
                    }
                }
                let pick = if runnable.len() == 1 { runnable[0] } else { runnable[w.streams.below(Stream::Sched, runnable.len() as u64) as usize] };
                // Then one of its threads: drawn only when several can run,
                // so a guest without threads draws exactly what it did.
                w.nodes[pick].runnable_tids(&mut tids);
                let tid = if tids.len() == 1 { tids[0] } else { tids[w.streams.below(Stream::Sched, tids.len() as u64) as usize] };
                w.step += 1;
                w.trace.step(pick, now);
                (pick, tid)
            };
            let (pick, tid) = pick;
            let fut = match tid {
                0 => self.futures[pick].as_mut(),
                t => self.threads[pick].get_mut(&t),
            };
            let polled = fut.expect("a runnable thread has a future").as_mut().poll(&mut cx);
            let (finished, spawns) = {
                let mut w = self.world.lock().unwrap();
                let finished = match polled {
                    Poll::Pending => {
                        if w.nodes[pick].thread_status(tid) == Some(Status::Runnable) {
                            // No blocking call: the fuel quantum ran out (a
                            // threaded guest's was drawn, `draw_quantum`).
                            let q = w.nodes[pick].threads.quanta.get(&tid).copied().unwrap_or(FUEL_QUANTUM);
                            w.charge_quantum(pick, tid, q);
                        }
                        None
                    }
                    // A spawned thread that returns ends alone.
                    Poll::Ready(Ok(())) if tid != 0 => {
                        w.nodes[pick].threads.threads.remove(&tid);
                        self.threads[pick].remove(&tid);
                        None
                    }
                    // The main thread's end, or any thread's exit or trap,
                    // ends the process and every thread of it.
                    Poll::Ready(result) => {
                        // A thread's exit ends a threaded process too: its
                        // last unfinished lines first (the main thread's
                        // own end flushed them already).
                        flush_shared(&mut w, pick);
                        let failure = finish(&mut w, pick, result);
                        w.nodes[pick].threads.clear();
                        Some(failure)
                    }
                };
                // Threads the step spawned (none once the process ended).
                (finished, std::mem::take(&mut w.nodes[pick].threads.spawns))
            };
            for (t, arg) in spawns {
                self.start_thread(pick, t, arg);
            }
            if let Some(failure) = finished {
                self.futures[pick] = None;
                self.end_threads(pick);
                if let Some(f) = failure {
                    return (EndReason::Failure, Some(f));
                }
            }
        }
    }
}

fn check_end(w: &mut World, duration: VTime) -> Option<(EndReason, Option<Failure>)> {
    if let Some(f) = w.property_failure.take() {
        return Some((EndReason::Failure, Some(f)));
    }
    if let Some(message) = w.fault.take() {
        return Some((EndReason::Failure, Some(limit_failure(w, message))));
    }
    if w.step >= w.limits.steps_max {
        let message = format!("the run exceeded {} scheduler steps (limits.steps_max)", w.limits.steps_max);
        return Some((EndReason::Failure, Some(limit_failure(w, message))));
    }
    let mut workload = w.nodes.iter().filter(|n| n.workload).peekable();
    if workload.peek().is_some() && workload.all(|n| n.status == Status::Exited(0)) {
        return Some((EndReason::WorkloadDone, None));
    }
    if w.now >= duration {
        w.now = duration.max(w.now);
        return Some((EndReason::Duration, None));
    }
    None
}

fn limit_failure(w: &mut World, message: String) -> Failure {
    let node = w.fault_node.take();
    w.record(node, EventKind::Failure { message: message.clone() });
    let node = node.map_or_else(|| "(world)".to_string(), |i| w.nodes[i].name.clone());
    Failure { kind: FailureKind::Limit, node, message, location: None, details: None, hint: None, time_ns: w.now.nanos(), step: w.step }
}

fn flush_output(ctx: &mut NodeCtx) {
    let NodeCtx { world, local } = ctx;
    let mut w = world.lock().unwrap();
    let idx = local.idx;
    // A threaded process's stdio is the world's between host calls.
    if flush_shared(&mut w, idx) {
        return;
    }
    local.stdout.flush(|l| w.output(idx, crate::trace::Stdio::Stdout, l));
    local.stderr.flush(|l| w.output(idx, crate::trace::Stdio::Stderr, l));
}

/// Records a threaded process's unfinished output lines; false when the
/// node keeps none in the world (no threads, or flushed already).
fn flush_shared(w: &mut World, idx: usize) -> bool {
    let Some(mut shared) = w.nodes[idx].threads.shared.take() else { return false };
    shared.stdout.flush(|l| w.output(idx, crate::trace::Stdio::Stdout, l));
    shared.stderr.flush(|l| w.output(idx, crate::trace::Stdio::Stderr, l));
    true
}

/// Records how a node's `_start` ended; returns the failure it means, if any.
fn finish(w: &mut World, idx: usize, result: wasmtime::Result<()>) -> Option<Failure> {
    let err = match result {
        Ok(()) => {
            return exited(w, idx, 0);
        }
        Err(e) => e,
    };
    if let Some(ProcExit(code)) = err.downcast_ref::<ProcExit>() {
        return exited(w, idx, *code);
    }
    if err.downcast_ref::<crate::traps::NodeCrashed>().is_some() {
        assert_eq!(w.nodes[idx].status, Status::Crashed, "NodeCrashed only after a crash");
        return None;
    }
    if err.downcast_ref::<crate::traps::PropertyFailed>().is_some() {
        return Some(w.property_failure.take().expect("a failed property recorded its failure"));
    }
    if let Some(message) = w.fault.take() {
        // The world ended the run and stopped this node (see `wasi::host`).
        return Some(limit_failure(w, message));
    }
    let stderr: Vec<String> = w.nodes[idx].stderr_tail.iter().cloned().collect();
    let (kind, message, location) = match err.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => (FailureKind::Watchdog, watchdog_message(w, idx), None),
        Some(trap) => match failure::rust_panic(&stderr, &trap_frames(&err)) {
            Some((m, loc)) if *trap == Trap::UnreachableCodeReached => (FailureKind::Panic, m, loc),
            None if *trap == Trap::UnreachableCodeReached && failure::rust_oom(&stderr).is_some() => {
                let mb = w.limits.memory_bytes_max >> 20;
                (FailureKind::Panic, format!("{} (the node's memory limit is {mb} MiB: limits.memory_mb)", failure::rust_oom(&stderr).unwrap()), None)
            }
            _ => (FailureKind::Trap, format!("{trap}"), None),
        },
        None if err.downcast_ref::<crate::node::HostWorkExceeded>().is_some() => (FailureKind::Watchdog, watchdog_message(w, idx), None),
        None if err.downcast_ref::<crate::memory::MemoryLimitExceeded>().is_some() => {
            let message = err.downcast_ref::<crate::memory::MemoryLimitExceeded>().unwrap().0.clone();
            w.record(Some(idx), EventKind::Failure { message: message.clone() });
            return fail(w, idx, FailureKind::Limit, message, None);
        }
        None => (FailureKind::Trap, format!("{err:#}"), None),
    };
    w.record(Some(idx), EventKind::Trap { message: message.clone() });
    fail(w, idx, kind, message, location)
}

/// The function names of a trap's wasm frames, innermost first (at most
/// `TRAP_FRAMES_MAX`, whatever the engine captures); unnamed frames are empty.
fn trap_frames(err: &wasmtime::Error) -> Vec<String> {
    let Some(bt) = err.downcast_ref::<wasmtime::WasmBacktrace>() else { return Vec::new() };
    bt.frames().iter().take(crate::engine::TRAP_FRAMES_MAX).map(|f| f.func_name().unwrap_or_default().to_string()).collect()
}

/// "node db ran 2000000000 instructions without blocking (limits.watchdog_instructions);
/// host work charged since it last blocked: 3902 poll_oneoff (...)".
fn watchdog_message(w: &World, idx: usize) -> String {
    let n = w.limits.watchdog_instructions;
    let node = &w.nodes[idx];
    let mut m = format!("node {} ran {n} instructions without blocking (limits.watchdog_instructions)", node.name);
    if !node.work_summary.is_empty() {
        m.push_str("; host work charged since it last blocked: ");
        m.push_str(&node.work_summary);
    }
    m
}

fn exited(w: &mut World, idx: usize, code: i32) -> Option<Failure> {
    w.record(Some(idx), EventKind::Exit { code });
    // Exit closes every descriptor: peers see end of stream, locks go.
    w.net_node_down(idx, false);
    w.locks.release_node(idx);
    if let Some(f) = w.property_failure.take() {
        return Some(f);
    }
    if code == 0 {
        w.nodes[idx].status = Status::Exited(0);
        return None;
    }
    let stderr: Vec<String> = w.nodes[idx].stderr_tail.iter().cloned().collect();
    match failure::go_panic(&stderr).or_else(|| failure::rust_panic(&stderr, &[])) {
        Some((message, location)) => fail(w, idx, FailureKind::Panic, message, location),
        None => fail(w, idx, FailureKind::Exit, format!("exited with code {code}"), None),
    }
}

fn fail(w: &mut World, idx: usize, kind: FailureKind, message: String, location: Option<String>) -> Option<Failure> {
    w.nodes[idx].status = Status::Failed;
    w.record(Some(idx), EventKind::Failure { message: message.clone() });
    let node = &w.nodes[idx];
    let stderr: Vec<&str> = node.stderr_tail.iter().map(String::as_str).collect();
    let hint = missing_dir_hint(w, idx, &message).or_else(|| crate::teach::hint(kind, &message, &stderr, &node.unsupported));
    Some(Failure { kind, node: w.nodes[idx].name.clone(), message, location, details: None, hint, time_ns: w.now.nanos(), step: w.step })
}

/// A folder the node tried to use that its disk never had, still does not
/// have, and that the failure's message names: the likely reason for the
/// failure, and how to seed it.
/// A failure that names no path but says "not found", in its message or
/// on stderr (Rust's `Os { code: 44, kind: NotFound, .. }` prints no path),
/// takes the last such folder.
fn missing_dir_hint(w: &World, idx: usize, message: &str) -> Option<String> {
    let missing = |d: &&String| w.disks[idx].lookup(crate::disk::ROOT, d).is_err();
    let dirs = &w.nodes[idx].missing_dirs;
    let says_not_found = |text: &str| ["NotFound", "No such file or directory", "ENOENT", "code: 44"].iter().any(|s| text.contains(s));
    let not_found = says_not_found(message) || w.nodes[idx].stderr_tail.iter().any(|l| says_not_found(l));
    let dir = dirs.iter().find(|d| message.contains(d.as_str()) && missing(d)).or_else(|| dirs.iter().rev().find(|d| not_found && missing(d)))?;
    let node = w.nodes[idx].name.split('#').next().unwrap_or(&w.nodes[idx].name);
    Some(format!("{dir} does not exist on {}'s disk (the disk starts empty); to start with it, add \"disk\": {{\"dirs\": [\"{dir}\"]}} to node \"{node}\" in the config, and a file the program reads there (a config file) from the host with \"disk\": {{\"files\": {{\"{dir}/NAME\": \"PATH-ON-THE-HOST\"}}}} (docs/config.md#a-nodes-own-disk-nodesidisk)", w.nodes[idx].name))
}
