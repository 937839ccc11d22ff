//! `run`: one deterministic run, a pure function of program and schedule.
use crate::node::NodeLocal;
use crate::outcome::{EndReason, Outcome, Stats, Verdict};
use crate::program::Program;
use crate::schedule::Schedule;
use crate::scheduler::Scheduler;
use crate::trace::EventKind;
use crate::world::{NodeState, Status, World};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Measure real time spent in host calls (benchmarks).
    pub profile: bool,
}

pub fn run(program: &Program, schedule: &Schedule, options: &RunOptions) -> Outcome {
    let started = std::time::Instant::now();
    let config = &program.config;
    let instances = config.instances();
    let states = instances
        .iter()
        .map(|(node_idx, name)| NodeState {
            name: name.clone(),
            workload: config.nodes[*node_idx].workload,
            status: Status::Runnable,
            wait_id: 0,
            fuel_charged: 0,
            stderr_tail: VecDeque::new(),
        })
        .collect();
    let mut world = World::new(schedule.seed, config.limits.clone(), states, options.profile);
    world.faults_planned = schedule.faults.clone();
    let mut branches = schedule.branches.clone();
    branches.sort_by_key(|b| b.at_ns);
    world.branches_pending = branches.into();
    let world = Arc::new(Mutex::new(world));
    let mut scheduler = Scheduler::new(world.clone());
    for (idx, (node_idx, name)) in instances.iter().enumerate() {
        let spec = &config.nodes[*node_idx];
        let mut args = vec![spec.name.clone()];
        args.extend(spec.args.iter().cloned());
        let mut env: Vec<(String, String)> = spec.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        env.push(("SEEDFALL_NODE".into(), name.clone()));
        env.push(("ANTITHESIS_SDK_LOCAL_OUTPUT".into(), crate::wasi::fdtable::ANTITHESIS_OUTPUT.into()));
        let local = NodeLocal::new(idx, &args, &env, config.limits.memory_bytes_max);
        scheduler.start(&program.engine.inner, &program.nodes[*node_idx].pre, local);
    }
    let (end, failure) = scheduler.drive(config.duration);
    let instantiate_ns = *scheduler.instantiate_ns.lock().unwrap();
    drop(scheduler);
    let mut w = Arc::try_unwrap(world).ok().expect("every node store is dropped after the run").into_inner().unwrap();
    let reason = match end {
        EndReason::Duration => "duration reached",
        EndReason::WorkloadDone => "every workload node exited 0",
        EndReason::Idle => "nothing left to happen",
        EndReason::Failure => "failure",
    };
    w.record(None, EventKind::End { reason: reason.into() });
    let stats = Stats {
        steps: w.step,
        virtual_ns: w.now.nanos(),
        real_ns: started.elapsed().as_nanos() as u64,
        instantiate_ns,
        host_ns: w.host_ns,
        host_calls: w.host_calls,
        fuel: 0,
    };
    let verdict = if failure.is_some() { Verdict::Fail } else { Verdict::Pass };
    let applied = Schedule { seed: schedule.seed, faults: Some(w.faults_applied.clone()), branches: schedule.branches.clone() };
    Outcome {
        seed: schedule.seed,
        schedule: applied,
        properties: std::mem::take(&mut w.props.by_message),
        setup_complete_ns: w.setup_complete_ns,
        verdict,
        end,
        failure,
        end_time: w.now,
        trace_hash: w.trace.hash(),
        trace_events_dropped: w.trace.events_dropped,
        trace: std::mem::take(&mut w.trace.events),
        stats,
    }
}
