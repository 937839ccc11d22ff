//! `run`: one deterministic run, a pure function of program and schedule.
use crate::outcome::{EndReason, Outcome, Stats, Verdict};
use crate::program::Program;
use crate::schedule::Schedule;
use crate::scheduler::Scheduler;
use crate::trace::EventKind;
use crate::world::{NodeState, World};
use crate::config::Config;
use crate::faults::{self, Planned};
use crate::events::Event;
use crate::schedule::Fault;
use std::sync::{Arc, Mutex};

#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Measure real time spent in host calls (benchmarks).
    pub profile: bool,
    /// Weaken one durability guarantee of every disk (`seedfall mutate`).
    pub mutation: Option<crate::disk::Mutation>,
    /// Every disk under this model, whatever the config says (the re-check
    /// of a failure under the other model).
    pub model: Option<crate::disk::FsModel>,
    /// Keep each disk's tree after every crash and at the end (`inspect -tree`).
    pub disk_trees: bool,
    /// Mirror each instance's descriptors into the world after every host
    /// call, so a pause can report them (`moment::MomentPause`).
    pub handles: bool,
    /// Collect every tree a crash could leave on each disk, at every moment
    /// one could land (`seedfall crash-states`; costly: a run crashes each
    /// disk's copy once per choice of kept sectors, at every disk call).
    pub crash_states: bool,
    /// Sample every node instance's guest stacks into this; the program's
    /// engine must be a profiling one (`EngineOptions::guest_profiling`).
    pub guest_profile: Option<Arc<Mutex<crate::guest_profile::GuestProfile>>>,
}

/// The model of each node instance's disk under these options.
pub fn disk_models(config: &Config, options: &RunOptions) -> Vec<crate::disk::FsModel> {
    config.instances().iter().map(|(n, _)| options.model.unwrap_or_else(|| config.nodes[*n].model(&config.disk))).collect()
}

/// Disks per the config (model, seeded folders and files); the fault plan
/// drawn from the rates, or taken exactly from the schedule.
fn setup_disks_and_faults(w: &mut World, program: &Program, schedule: &Schedule, options: &RunOptions) {
    let config = &program.config;
    let instances = config.instances();
    for ((i, (node_idx, _)), model) in instances.iter().enumerate().zip(disk_models(config, options)) {
        let spec = &config.nodes[*node_idx];
        let mut d = crate::disk::Disk::new(config.disk.sector_bytes, model);
        d.commit_interval_ns = config.disk.commit_interval_ns.unwrap_or(model.commit_interval_default_ns());
        d.mutation = options.mutation.filter(|m| m.applies_to(model));
        let capacity = spec.capacity(&config.disk);
        for dir in &spec.disk.dirs {
            d.seed_dir(dir).unwrap_or_else(|e| panic!("a checked seed folder {dir} cannot be made: errno {e}"));
        }
        for (path, data) in &program.disk_seeds[*node_idx] {
            if d.seed_file(path, data).is_err() {
                w.fault.get_or_insert_with(|| format!("node \"{}\": cannot seed {path} (a folder is in its way, or the disk is full)", spec.name));
            }
        }
        // Set once seeded: what the config seeds must fit, or no seed can run.
        if let Some(cap) = capacity.filter(|&c| d.used_bytes() > c) {
            let field = if spec.disk.capacity.is_some() { format!("nodes[{node_idx}].disk.capacity") } else { "disk.capacity".to_string() };
            w.fault.get_or_insert_with(|| format!("node \"{}\": its seeded folders and files hold {} bytes, more than {field} ({cap} bytes)", spec.name, d.used_bytes()));
        }
        d.capacity = capacity;
        w.disks[i] = d;
    }
    w.faults.media.replicas = instances.iter().map(|(n, name)| {
        let count = config.nodes[*n].instance_count();
        let index = name.rsplit_once('#').and_then(|(_, r)| r.parse::<u32>().ok()).map_or(0, |r| r - 1);
        (index, count)
    }).collect();
    w.faults.io_latency_ns = config.disk.io_latency_ns;
    w.faults.fsync_latency_ns = config.disk.fsync_latency_ns;
    w.faults.eio_probability = config.faults.fsync_eio.as_ref().map_or(0.0, |e| e.probability);
    w.faults.eio_targets = (0..w.nodes.len()).map(|i| faults::eio_target(config, i)).collect();
    let timed: Vec<(crate::vtime::VTime, Planned)> = match &schedule.faults {
        None => {
            w.faults.families = faults::families(&config.faults, &mut w.streams);
            if config.faults.swarm {
                let families = w.faults.families.names().into_iter().map(str::to_string).collect();
                w.record(None, EventKind::Families { families });
            }
            let media = |family: &Option<crate::config::MediaFaults>, on: bool| crate::world::storage::MediaRate {
                on,
                probability: family.as_ref().map_or(0.0, |m| m.probability),
                targets: (0..instances.len()).map(|i| faults::media_target(config, family, i)).collect(),
                atlas: family.as_ref().is_some_and(|m| m.atlas),
            };
            let fam = w.faults.families.clone();
            w.faults.media.corrupt_read = media(&config.faults.corrupt_read, fam.corrupt_read);
            w.faults.media.latent_sector_error = media(&config.faults.latent_sector_error, fam.latent_sector_error);
            w.faults.media.misdirected_write = media(&config.faults.misdirected_write, fam.misdirected_write);
            w.faults.media.lost_write = media(&config.faults.lost_write, fam.lost_write);
            if let Some(we) = &config.faults.write_error {
                w.faults.media.write_error = crate::world::storage::MediaRate {
                    on: fam.write_error,
                    probability: we.probability,
                    targets: (0..instances.len()).map(|i| faults::targeted(config, &we.nodes, i)).collect(),
                    atlas: false,
                };
                w.faults.media.write_error_prefix = we.path_prefix.clone();
                w.faults.media.write_errnos = we.errors.clone();
            }
            if config.faults.after_setup {
                // Planned when setup completes (`World::setup_complete`).
                w.faults.waiting_setup = true;
                w.faults.rates = Some(std::sync::Arc::new(config.clone()));
                Vec::new()
            } else {
                faults::plan(config, &w.faults.families, &mut w.streams, crate::vtime::VTime::ZERO)
            }
        }
        Some(list) => {
            let mut timed = Vec::new();
            for f in list {
                match f {
                    Fault::Crash { disk_op: Some(_), .. } => w.faults.crash_at_op.push(f.clone()),
                    Fault::FsyncEio { node, sync, .. } => {
                        if let Some(i) = w.node_index(node) {
                            w.faults.eio_at_sync.push((i, *sync));
                        }
                    }
                    Fault::Buggify { .. } => {}
                    Fault::CorruptRead { node, read, .. } | Fault::LatentSectorError { node, read, .. } => {
                        if let Some(i) = w.node_index(node) {
                            w.faults.media.at_read.insert((i, *read), f.clone());
                        }
                    }
                    Fault::MisdirectedWrite { node, write, .. } | Fault::LostWrite { node, write, .. } | Fault::WriteError { node, write, .. } => {
                        if let Some(i) = w.node_index(node) {
                            w.faults.media.at_write.insert((i, *write), f.clone());
                        }
                    }
                    timed_fault => timed.push((crate::vtime::VTime(timed_fault.at_ns()), Planned::Exact(timed_fault.clone()))),
                }
            }
            timed
        }
    };
    for (at, planned) in timed {
        let plan_idx = w.faults.plan.len();
        w.faults.plan.push(planned);
        w.push_event(at, Event::Fault { plan_idx });
    }
}

pub fn run(program: &Program, schedule: &Schedule, options: &RunOptions) -> Outcome {
    run_paused(program, schedule, options, None)
}

/// `run`, offering every moment between scheduler steps to `pause`
/// (`snapshot`): what it does there (a snapshot's fork) does not change
/// the run unless it retargets the world to another schedule.
pub fn run_paused(program: &Program, schedule: &Schedule, options: &RunOptions, pause: Option<&mut dyn crate::snapshot::Pause>) -> Outcome {
    let config = &program.config;
    let instances = config.instances();
    let states = instances.iter().map(|(node_idx, name)| NodeState::new(name.clone(), config.nodes[*node_idx].workload)).collect();
    let mut world = World::new(schedule.world_seed(), config.limits.clone(), states, options.profile);
    world.name_seed = schedule.seed;
    world.prefix = schedule.prefix;
    world.faults_planned = schedule.faults.clone();
    world.end = config.duration;
    world.net = crate::net::Net::new(config.net.clone(), instances.iter().map(|(_, n)| n.clone()).collect());
    setup_disks_and_faults(&mut world, program, schedule, options);
    world.keep_disk_trees = options.disk_trees;
    world.keep_handles = options.handles;
    if options.crash_states {
        world.crash_states = Some(vec![crate::disk::CrashStates::default(); instances.len()]);
        for i in 0..instances.len() {
            world.note_crash_states(i);
        }
    }
    world.coverage = vec![crate::coverage::Reached::default(); instances.len()];
    world.edges = vec![crate::coverage::EdgesReached::default(); instances.len()];
    world.branches = schedule.branches.clone();
    world.branches_pending = schedule.applied_branches().into();
    if schedule.faults.is_none() && !world.branches_pending.is_empty() {
        world.faults.rates = Some(std::sync::Arc::new(config.clone()));
    }
    let world = Arc::new(Mutex::new(world));
    let mut scheduler = Scheduler::new(world.clone());
    if let Some(profile) = &options.guest_profile {
        assert!(program.engine.options.guest_profiling, "a guest profile needs a profiling engine (its code has the epoch checks)");
        scheduler.profile = Some(profile.clone());
    }
    for (idx, (node_idx, name)) in instances.iter().enumerate() {
        let spec = &config.nodes[*node_idx];
        let mut args = vec![spec.name.clone()];
        args.extend(spec.args.iter().cloned());
        let mut env: Vec<(String, String)> = spec.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        if matches!(spec.source, crate::config::WasmSource::Go { .. }) && !spec.env.contains_key("GOGC") {
            env.push(("GOGC".into(), crate::config::GO_GOGC_DEFAULT.into()));
        }
        env.push(("SEEDFALL_NODE".into(), name.clone()));
        env.push(("ANTITHESIS_SDK_LOCAL_OUTPUT".into(), crate::wasi::fdtable::ANTITHESIS_OUTPUT.into()));
        let _ = idx;
        let pn = &program.nodes[*node_idx];
        scheduler.add(&program.engine.inner, pn.module.clone(), pn.coverage, args, env, config.limits.memory_bytes_max);
    }
    let (end, failure) = scheduler.drive(config.duration, pause);
    let instantiate_ns = *scheduler.instantiate_ns.lock().unwrap();
    drop(scheduler);
    let mut w = Arc::try_unwrap(world).ok().expect("every node store is dropped after the run").into_inner().unwrap();
    let reason = match end {
        EndReason::Duration => "duration reached".to_string(),
        EndReason::WorkloadDone => "every workload node exited 0".to_string(),
        EndReason::Idle => {
            // Every node waits and nothing is scheduled: say who was still
            // waiting, since a workload stuck for good is often the story.
            let stuck: Vec<&str> = w.nodes.iter().filter(|n| n.workload && n.status == crate::world::Status::Blocked).map(|n| n.name.as_str()).collect();
            match stuck.as_slice() {
                [] => "nothing left to happen".to_string(),
                names => format!("nothing left to happen; waiting for good: {}", names.join(", ")),
            }
        }
        EndReason::Failure => "failure".to_string(),
    };
    w.record(None, EventKind::End { reason });
    w.note_output_caps();
    // A power loss after the run: what each disk holds then. A crashed node
    // that never restarted already had its crash.
    for i in 0..w.nodes.len() {
        if w.nodes[i].status != crate::world::Status::Crashed {
            w.note_crash_states(i);
        }
    }
    if options.disk_trees {
        for i in 0..w.nodes.len() {
            let tree = crate::outcome::DiskTree { node: w.nodes[i].name.clone(), time_ns: w.now.nanos(), after: "end", entries: w.disks[i].tree() };
            w.disk_trees.push(tree);
        }
    }
    let stats = Stats {
        steps: w.step,
        virtual_ns: w.now.nanos(),
        real_ns: w.real_start.elapsed().as_nanos() as u64,
        instantiate_ns,
        host_ns: w.host_ns,
        host_calls: w.host_calls,
        fuel: 0,
    };
    let verdict = if failure.is_some() { Verdict::Fail } else { Verdict::Pass };
    // Functions reached, and edge (index, bucket) pairs, per config node
    // (replicas run the same module), each with the earliest time any
    // instance first reached it.
    let node_of = |i: usize| config.nodes[instances[i].0].name.clone();
    let coverage = earliest_per_node(w.coverage.iter().map(|r| r.first.as_slice()), node_of, |f| f.index, |f| (f.at_ns, f.step));
    let edges = earliest_per_node(w.edges.iter().map(|r| r.first.as_slice()), node_of, |f| (f.index, f.bucket), |f| (f.at_ns, f.step));
    let applied = Schedule { seed: w.name_seed, faults: Some(w.faults_applied.clone()), branches: std::mem::take(&mut w.branches), prefix: w.prefix };
    Outcome {
        seed: w.name_seed,
        schedule: applied,
        properties: std::mem::take(&mut w.props.by_message),
        watermarks_dropped: w.props.watermarks.dropped,
        watermarks: std::mem::take(&mut w.props.watermarks).into_vec(),
        coverage,
        edges,
        setup_complete_ns: w.setup_complete_ns,
        stream_draws: w.streams.draws,
        verdict,
        end,
        failure,
        end_time: w.now,
        trace_hash: w.trace.hash(),
        trace_events_dropped: w.trace.events_dropped,
        trace: std::mem::take(&mut w.trace.events),
        stats,
        disk_models: disk_models(config, options),
        disk_trees: std::mem::take(&mut w.disk_trees),
        crash_states: w.crash_states.take().unwrap_or_default(),
        model_check: None,
    }
}

/// Merges what each node instance reached (`per_instance`, in instance
/// order) into one list per config node, sorted by `key`, keeping each
/// item's earliest `(time, step)`.
fn earliest_per_node<'a, E: Copy + 'a, K: Ord>(
    per_instance: impl Iterator<Item = &'a [E]>,
    node_of: impl Fn(usize) -> String,
    key: impl Fn(&E) -> K,
    when: impl Fn(&E) -> (u64, u64),
) -> std::collections::BTreeMap<String, Vec<E>> {
    // Sorted vectors, not a map per node: this runs at the end of every run
    // over every function reached, and a map of hundreds of entries per run
    // was 2% of a short run's time.
    let mut acc: std::collections::BTreeMap<String, Vec<E>> = std::collections::BTreeMap::new();
    for (i, first) in per_instance.enumerate().filter(|(_, f)| !f.is_empty()) {
        acc.entry(node_of(i)).or_default().extend_from_slice(first);
    }
    for entries in acc.values_mut() {
        // Stable: among equal keys and times the first seen stays first,
        // and is the one kept.
        entries.sort_by(|a, b| key(a).cmp(&key(b)).then_with(|| when(a).cmp(&when(b))));
        entries.dedup_by(|later, kept| key(later) == key(kept));
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::earliest_per_node;

    #[test]
    fn earliest_per_node_keeps_each_keys_first_reach_across_replicas() {
        // (key, time, tag): replicas 0 and 1 are node "a", 2 is node "b".
        let r0 = [(5u32, 30u64, 'x'), (1, 10, 'y'), (5, 20, 'z')];
        let r1 = [(5u32, 20u64, 'w'), (1, 5, 'v'), (9, 1, 'u')];
        let r2 = [(1u32, 99u64, 't')];
        let per = [&r0[..], &r1[..], &r2[..]];
        let got = earliest_per_node(per.into_iter(), |i| if i < 2 { "a".to_string() } else { "b".to_string() }, |e| e.0, |e| (e.1, 0));
        // Key 5: earliest at 20, first seen in replica 0 ('z' before 'w').
        assert_eq!(got["a"], vec![(1, 5, 'v'), (5, 20, 'z'), (9, 1, 'u')]);
        assert_eq!(got["b"], vec![(1, 99, 't')]);
    }
}
