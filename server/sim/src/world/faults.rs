//! Faults and branches as they happen to the world: the plan's entries
//! applied at their time, crashes, and the re-keying of streams (which,
//! with fault rates, draws the faults still to come again).
use super::{Status, World};
use crate::events::Event;
use crate::schedule::Fault;
use crate::streams::Stream;
use crate::trace::EventKind;
use crate::vtime::VTime;

impl World {
    /// Applies every branch due at the current time (at a scheduler step).
    pub fn apply_due_branches(&mut self) {
        while self.branches_pending.front().is_some_and(|b| b.at_ns <= self.now.nanos()) {
            let b = self.branches_pending.pop_front().unwrap();
            self.branches_applied += 1;
            let streams = b.parsed_streams();
            for &s in &streams {
                self.streams.rekey(s, self.seed, b.key);
            }
            self.record(None, EventKind::Branch { streams: b.streams.clone() });
            if streams.contains(&Stream::Faults) {
                self.replan_faults();
            }
        }
    }

    /// Rates mode: the time-based faults drawn for the time after now, and
    /// not yet applied, are drawn again from the re-keyed `faults` stream, so
    /// a branch changes what faults come, not only the other draws. (With a
    /// schedule's exact faults there is nothing to draw.)
    pub(super) fn replan_faults(&mut self) {
        let Some(config) = self.faults.rates.clone() else { return };
        if self.faults.waiting_setup {
            return;
        }
        self.events.retain(|e| !matches!(e, Event::Fault { .. }));
        for (at, planned) in crate::faults::plan(&config, &self.faults.families, &mut self.streams, self.now) {
            let plan_idx = self.faults.plan.len();
            self.faults.plan.push(planned);
            self.push_event(at, Event::Fault { plan_idx });
        }
    }

    /// Applies entry `plan_idx` of the fault plan, now.
    pub fn apply_planned(&mut self, plan_idx: usize) {
        use crate::faults::Planned;
        let planned = self.faults.plan[plan_idx].clone();
        let now = self.now.nanos();
        match planned {
            Planned::Crash { node_idx, during_disk_op, restart_after_ns, kill } => {
                if !self.nodes[node_idx].alive() {
                    return;
                }
                if during_disk_op {
                    self.faults.crash_armed.insert(node_idx, (restart_after_ns, kill));
                } else {
                    let node = self.nodes[node_idx].name.clone();
                    let torn = self.faults.families.torn_writes && !kill;
                    self.crash(node_idx, Fault::Crash { node, at_ns: now, disk_op: None, restart_after_ns, torn, kill });
                }
            }
            Planned::Pause { node_idx, duration_ns } => {
                let node = self.nodes[node_idx].name.clone();
                self.apply_exact(node_idx, Fault::Pause { node, at_ns: now, duration_ns });
            }
            Planned::Skew { node_idx, rate_ppm, duration_ns } => {
                let node = self.nodes[node_idx].name.clone();
                self.apply_exact(node_idx, Fault::ClockSkew { node, at_ns: now, rate_ppm, duration_ns });
            }
            Planned::Jump { node_idx, delta_ns } => {
                let node = self.nodes[node_idx].name.clone();
                self.apply_exact(node_idx, Fault::ClockJump { node, at_ns: now, delta_ns });
            }
            Planned::Partition { node_idx, duration_ns, direction } => {
                let node = self.nodes[node_idx].name.clone();
                self.apply_exact(node_idx, Fault::Partition { node, at_ns: now, duration_ns, peers: Vec::new(), direction });
            }
            Planned::DiskFull { node_idx, duration_ns } => {
                let node = self.nodes[node_idx].name.clone();
                self.apply_exact(node_idx, Fault::DiskFull { node, at_ns: now, duration_ns });
            }
            Planned::Exact(fault) => {
                let Some(node_idx) = self.node_index(fault.node()) else { return };
                self.apply_exact(node_idx, fault);
            }
        }
    }

    pub fn node_index(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Applies one time-based fault as described (recording it as applied).
    fn apply_exact(&mut self, node_idx: usize, fault: Fault) {
        if !self.nodes[node_idx].alive() {
            return;
        }
        let now = self.now;
        match &fault {
            Fault::Crash { .. } => return self.crash(node_idx, fault.clone().at(now.nanos())),
            Fault::Pause { duration_ns, .. } => {
                let until = now + *duration_ns;
                let n = &mut self.nodes[node_idx];
                n.paused_until = Some(n.paused_until.map_or(until, |u| u.max(until)));
                self.push_event(until, Event::Resume { node_idx });
            }
            Fault::ClockSkew { rate_ppm, duration_ns, .. } => {
                let n = &mut self.nodes[node_idx];
                n.clock.set_rate(now, (*rate_ppm).max(1));
                n.skew_id += 1;
                let skew_id = n.skew_id;
                self.push_event(now + *duration_ns, Event::SkewEnd { node_idx, skew_id });
            }
            Fault::ClockJump { delta_ns, .. } => {
                let c = &mut self.nodes[node_idx].clock;
                c.realtime_offset_ns = c.realtime_offset_ns.saturating_add(*delta_ns);
            }
            Fault::Partition { duration_ns, peers, direction, .. } => {
                let others: Vec<usize> = if peers.is_empty() {
                    (0..self.nodes.len()).filter(|&i| i != node_idx).collect()
                } else {
                    peers.iter().filter_map(|p| self.node_index(p)).filter(|&i| i != node_idx).collect()
                };
                let mut links = Vec::new();
                for o in others {
                    if *direction != crate::schedule::Direction::Inbound {
                        links.push((node_idx, o));
                    }
                    if *direction != crate::schedule::Direction::Outbound {
                        links.push((o, node_idx));
                    }
                }
                let id = self.net.partition(links);
                self.push_event(now + *duration_ns, Event::Net(crate::net::NetEvent::Heal { id }));
            }
            Fault::DiskFull { duration_ns, .. } => {
                // The disk outlives its node's instances: a restart meets it full too.
                let d = &mut self.disks[node_idx];
                d.full_until = d.full_until.max(now + *duration_ns);
            }
            Fault::FsyncEio { .. }
            | Fault::WriteError { .. }
            | Fault::Buggify { .. }
            | Fault::CorruptRead { .. }
            | Fault::LatentSectorError { .. }
            | Fault::MisdirectedWrite { .. }
            | Fault::LostWrite { .. } => unreachable!("not a time-based fault: {fault:?}"),
        }
        self.record(Some(node_idx), EventKind::Fault { fault: fault.clone() });
        self.faults_applied.push(fault);
    }

    pub fn end_skew(&mut self, node_idx: usize, skew_id: u64) {
        let now = self.now;
        let n = &mut self.nodes[node_idx];
        if n.skew_id == skew_id {
            n.clock.set_rate(now, crate::clockmodel::RATE_ONE_PPM);
        }
    }

    pub fn push_event(&mut self, at: VTime, event: Event) {
        if self.events.push(at.max(self.now), event).is_err() {
            self.fault.get_or_insert_with(|| "the event queue is full (a timer storm?)".to_string());
        }
    }

    /// Power loss on a node: its disk keeps only what was durable (torn
    /// sectors drawn from the `disk` stream), its instance is gone, and it
    /// restarts later if the fault says so. A kill takes the instance only:
    /// the disk, page cache and all, is as the process left it.
    pub fn crash(&mut self, node_idx: usize, fault: Fault) {
        let Fault::Crash { restart_after_ns, torn, kill, .. } = fault else { unreachable!("crash() takes a crash") };
        assert!(self.nodes[node_idx].alive(), "only a live node can crash");
        self.disks[node_idx].tick(self.now);
        let streams = &mut self.streams;
        let report = if kill { crate::disk::CrashReport::default() } else { self.disks[node_idx].crash(torn, |n| streams.below(Stream::Disk, n as u64) as usize) };
        let n = &mut self.nodes[node_idx];
        n.status = Status::Crashed;
        // Every thread dies with the process (the scheduler drops them).
        n.threads.clear();
        n.generation += 1;
        n.paused_until = None;
        n.stderr_tail.clear();
        let generation = n.generation;
        self.faults.crash_armed.remove(&node_idx);
        self.record(Some(node_idx), EventKind::Fault { fault: fault.clone() });
        self.record(
            Some(node_idx),
            EventKind::Crash { sectors_lost: report.sectors_lost, sectors_torn_kept: report.sectors_torn_kept, lost: report.losses, lost_more: report.losses_more, kill },
        );
        self.faults_applied.push(fault);
        if self.keep_disk_trees {
            let tree = crate::outcome::DiskTree { node: self.nodes[node_idx].name.clone(), time_ns: self.now.nanos(), after: "crash", entries: self.disks[node_idx].tree() };
            self.disk_trees.push(tree);
        }
        self.crashed_now.push(node_idx);
        self.locks.release_node(node_idx);
        self.net_node_down(node_idx, true);
        if let Some(after) = restart_after_ns {
            let at = self.now + after;
            self.push_event(at, Event::Restart { node_idx, generation });
        }
    }
}
