//! The fault plan of a run: which faults happen, where and when.
//!
//! Without a schedule, faults are drawn from the config's rates, all from the
//! `faults` stream, at the start of the run (time-based ones) or at the
//! moment they apply (fsync errors, crashes that land inside a disk op). With
//! a schedule, exactly its faults are applied and nothing is drawn: that is
//! what makes a schedule file replay a run, and a shrunk schedule a smaller
//! run. Either way, every fault applied is recorded (`World::faults_applied`).
use crate::config::{Config, FaultConfig, Span};
use crate::schedule::Fault;
use crate::streams::{Stream, Streams};
use crate::vtime::VTime;

/// Bound on time-based faults planned per run.
pub const PLANNED_MAX: usize = 100_000;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Planned {
    /// Crash now, or (with `during_disk_op`) inside the node's next disk op;
    /// with `kill`, the process dies and the machine keeps its page cache.
    Crash { node_idx: usize, during_disk_op: bool, restart_after_ns: Option<u64>, kill: bool },
    Pause { node_idx: usize, duration_ns: u64 },
    Skew { node_idx: usize, rate_ppm: u64, duration_ns: u64 },
    Jump { node_idx: usize, delta_ns: i64 },
    /// Isolate the node from every other instance.
    Partition { node_idx: usize, duration_ns: u64, direction: crate::schedule::Direction },
    /// The node's disk has no free space for a while.
    DiskFull { node_idx: usize, duration_ns: u64 },
    /// A recorded fault from a schedule, applied as it was.
    Exact(Fault),
}

/// Which families are on for this run (swarm mode switches half of them off).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Families {
    pub crash: bool,
    pub fsync_eio: bool,
    pub torn_writes: bool,
    pub pause: bool,
    pub clock_skew: bool,
    pub clock_jump: bool,
    pub partition: bool,
    pub corrupt_read: bool,
    pub latent_sector_error: bool,
    pub misdirected_write: bool,
    pub lost_write: bool,
    pub write_error: bool,
    pub disk_full: bool,
}

impl Families {
    pub fn names(&self) -> Vec<&'static str> {
        let all = [
            (self.crash, "crash"),
            (self.fsync_eio, "fsync_eio"),
            (self.torn_writes, "torn_writes"),
            (self.pause, "pause"),
            (self.clock_skew, "clock_skew"),
            (self.clock_jump, "clock_jump"),
            (self.partition, "partition"),
            (self.corrupt_read, "corrupt_read"),
            (self.latent_sector_error, "latent_sector_error"),
            (self.misdirected_write, "misdirected_write"),
            (self.lost_write, "lost_write"),
            (self.write_error, "write_error"),
            (self.disk_full, "disk_full"),
        ];
        all.into_iter().filter(|(on, _)| *on).map(|(_, n)| n).collect()
    }
}

pub fn families(f: &FaultConfig, streams: &mut Streams) -> Families {
    let mut pick = |configured: bool| configured && (!f.swarm || streams.below(Stream::Faults, 2) == 0);
    Families {
        crash: pick(f.crash.is_some()),
        fsync_eio: pick(f.fsync_eio.is_some()),
        torn_writes: pick(f.torn_writes),
        pause: pick(f.pause.is_some()),
        clock_skew: pick(f.clock_skew.is_some()),
        clock_jump: pick(f.clock_jump.is_some()),
        partition: pick(f.partition.is_some()),
        corrupt_read: pick(f.corrupt_read.is_some()),
        latent_sector_error: pick(f.latent_sector_error.is_some()),
        misdirected_write: pick(f.misdirected_write.is_some()),
        lost_write: pick(f.lost_write.is_some()),
        // Last, so a config without them draws what it always drew.
        write_error: pick(f.write_error.is_some()),
        disk_full: pick(f.disk_full.is_some()),
    }
}

fn span(streams: &mut Streams, s: Span) -> u64 {
    s.draw(streams, Stream::Faults)
}

/// Arrival times after `from` for `rate` faults per virtual second: gaps are
/// uniform on [0, 2/rate] (mean 1/rate). Integer and IEEE-basic arithmetic
/// only, so every machine draws the same plan.
fn arrivals(streams: &mut Streams, rate: f64, from: VTime, duration: VTime) -> Vec<VTime> {
    let mut out = Vec::new();
    if rate <= 0.0 {
        return out;
    }
    let gap_max_ns = ((2.0 / rate) * 1e9) as u64;
    let mut t = from.nanos();
    while out.len() < PLANNED_MAX {
        t = t.saturating_add(streams.below(Stream::Faults, gap_max_ns.max(1)) + 1);
        if t >= duration.nanos() {
            break;
        }
        out.push(VTime(t));
    }
    out
}

fn targets(config: &Config, nodes: &[String]) -> Vec<usize> {
    config.instances().iter().enumerate().filter(|(_, (n, _))| nodes.contains(&config.nodes[*n].name)).map(|(i, _)| i).collect()
}

/// Draws the time-based faults of a run from the config's rates, for the
/// time after `from`: 0 at the start, or the moment a branch re-keyed the
/// `faults` stream (`World::apply_due_branches`).
pub fn plan(config: &Config, fam: &Families, streams: &mut Streams, from: VTime) -> Vec<(VTime, Planned)> {
    let f = &config.faults;
    let mut out = Vec::new();
    if let (true, Some(c)) = (fam.crash, &f.crash) {
        for node_idx in targets(config, &c.nodes) {
            for at in arrivals(streams, c.rate, from, config.duration) {
                let during_disk_op = c.during_disk_op > 0.0 && streams.chance(Stream::Faults, c.during_disk_op);
                let restart_after_ns = c.restart_after.map(|s| span(streams, s));
                // Drawn only when configured, so plans without kills draw
                // what they always drew.
                let kill = c.kill > 0.0 && streams.chance(Stream::Faults, c.kill);
                out.push((at, Planned::Crash { node_idx, during_disk_op, restart_after_ns, kill }));
            }
        }
    }
    if let (true, Some(p)) = (fam.pause, &f.pause) {
        for node_idx in targets(config, &p.nodes) {
            for at in arrivals(streams, p.rate, from, config.duration) {
                out.push((at, Planned::Pause { node_idx, duration_ns: span(streams, p.duration) }));
            }
        }
    }
    if let (true, Some(s)) = (fam.clock_skew, &f.clock_skew) {
        for node_idx in targets(config, &s.nodes) {
            for at in arrivals(streams, s.rate, from, config.duration) {
                let drift = 1 + streams.below(Stream::Faults, s.max_ppm);
                let rate_ppm = if streams.below(Stream::Faults, 2) == 0 { 1_000_000 + drift } else { 1_000_000 - drift.min(999_999) };
                out.push((at, Planned::Skew { node_idx, rate_ppm, duration_ns: span(streams, s.duration) }));
            }
        }
    }
    if let (true, Some(j)) = (fam.clock_jump, &f.clock_jump) {
        for node_idx in targets(config, &j.nodes) {
            for at in arrivals(streams, j.rate, from, config.duration) {
                let size = 1 + streams.below(Stream::Faults, j.max_ns.max(1)) as i64;
                let delta_ns = if streams.below(Stream::Faults, 2) == 0 { size } else { -size };
                out.push((at, Planned::Jump { node_idx, delta_ns }));
            }
        }
    }
    if let (true, Some(p)) = (fam.partition, &f.partition) {
        use crate::schedule::Direction;
        for node_idx in targets(config, &p.nodes) {
            for at in arrivals(streams, p.rate, from, config.duration) {
                let duration_ns = span(streams, p.duration);
                let one_way = p.one_way > 0.0 && streams.chance(Stream::Faults, p.one_way);
                let direction = Direction::drawn(one_way, streams.below(Stream::Faults, 2));
                out.push((at, Planned::Partition { node_idx, duration_ns, direction }));
            }
        }
    }
    if let (true, Some(d)) = (fam.disk_full, &f.disk_full) {
        for node_idx in targets(config, &d.nodes) {
            for at in arrivals(streams, d.rate, from, config.duration) {
                out.push((at, Planned::DiskFull { node_idx, duration_ns: span(streams, d.duration) }));
            }
        }
    }
    out.sort_by_key(|(t, _)| *t);
    out
}

/// Whether the node instance is one of the config nodes `nodes` names.
pub fn targeted(config: &Config, nodes: &[String], node_idx: usize) -> bool {
    targets(config, nodes).contains(&node_idx)
}

/// Whether the node instance is a target of a storage fault family.
pub fn media_target(config: &Config, family: &Option<crate::config::MediaFaults>, node_idx: usize) -> bool {
    family.as_ref().is_some_and(|m| targeted(config, &m.nodes, node_idx))
}

/// Whether the node instance is a target of the fsync-EIO family.
pub fn eio_target(config: &Config, node_idx: usize) -> bool {
    config.faults.fsync_eio.as_ref().is_some_and(|e| targeted(config, &e.nodes, node_idx))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Swarm mode switches the full-disk families on and off like the
    /// others, and a config without them draws what it always drew.
    #[test]
    fn swarm_mode_takes_the_full_disk_families_too() {
        let with = r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "faults": {"swarm": true, "pause": {"rate": 1, "duration": "1ms"},
            "write_error": {"probability": 0.1}, "disk_full": {"rate": 1, "duration": "1ms"}}}"#;
        let config = Config::parse(std::path::Path::new("/x/seedfall.json"), with).unwrap();
        let mut seen = (0, 0, 0);
        for seed in 0..64 {
            let fam = families(&config.faults, &mut Streams::new(seed));
            seen.0 += usize::from(fam.write_error);
            seen.1 += usize::from(fam.disk_full);
            seen.2 += usize::from(fam.write_error && fam.disk_full && fam.pause);
            assert_eq!(fam.names().contains(&"write_error"), fam.write_error);
        }
        assert!((10..54).contains(&seen.0) && (10..54).contains(&seen.1) && seen.2 > 0, "{seen:?}");
        // The draws for the families configured before them are unchanged.
        let without = r#"{"duration": "2s", "nodes": [{"name": "a", "wasm": "a"}], "faults": {"swarm": true, "pause": {"rate": 1, "duration": "1ms"}}}"#;
        let config_without = Config::parse(std::path::Path::new("/x/seedfall.json"), without).unwrap();
        assert!(config_without.faults.write_error.is_none() && config_without.faults.disk_full.is_none());
        for seed in 0..64 {
            assert_eq!(families(&config.faults, &mut Streams::new(seed)).pause, families(&config_without.faults, &mut Streams::new(seed)).pause);
        }
    }
}
