//! How exploration makes a child from a corpus entry.
//!
//! Every choice draws from the exploration's own ChaCha stream (seeded by
//! `-explore-seed`), one child at a time, before any child runs, so the
//! children of a round do not depend on `-j` or on timing.
//!
//! - pick an entry, more often when it holds rare signals;
//! - odds 3 in 5: branch just after one of its signals happened (more often
//!   a rare one) and re-key every stream: the run replays up to the rare
//!   state and continues from there with a different future;
//! - odds 1 in 5: re-key one stream (sched, net, disk, disklatency, random)
//!   from a random moment;
//! - otherwise add, remove or shift a fault (or, when the config has no
//!   fault families and the entry no faults, branch after a signal).
use super::corpus::Entry;
use super::signals::Signal;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use seedfall_sim::streams::Stream;
use seedfall_sim::{Branch, Config, Fault, Schedule};
use std::collections::BTreeMap;

pub struct Chooser {
    rng: ChaCha20Rng,
}

/// Weight unit: a signal seen in one run weighs this much; in n runs, 1/n of it.
const RARITY_UNIT: u64 = 1 << 20;

impl Chooser {
    pub fn new(explore_seed: u64) -> Chooser {
        let mut rng = ChaCha20Rng::seed_from_u64(explore_seed);
        rng.set_stream(0x6578_706c_6f72_65);
        Chooser { rng }
    }

    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0);
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.rng.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    fn weighted(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        if total == 0 {
            return self.below(weights.len() as u64) as usize;
        }
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < w {
                return i;
            }
            x -= w;
        }
        unreachable!("x < total")
    }

    /// A child schedule of one of `entries`. `order` numbers signals in the
    /// order they were discovered.
    pub fn child(&mut self, entries: &[Entry], counts: &BTreeMap<Signal, u64>, order: &BTreeMap<Signal, u32>, config: &Config) -> Schedule {
        assert!(!entries.is_empty(), "exploration needs a corpus");
        // Rarity falls with the square of how often a signal was reached
        // (fresh, not inherited through a branch), and rises steeply with how
        // recently it was discovered: the newest, rarest states get most runs.
        let rarity = |s: &Signal| {
            let n = counts.get(s).copied().unwrap_or(1).max(1);
            let recency = 1u64 << (2 * order.get(s).copied().unwrap_or(0).min(20));
            RARITY_UNIT.saturating_mul(recency) / n.saturating_mul(n)
        };
        let weights: Vec<u64> = entries.iter().map(|e| 1 + e.reached.iter().map(|r| rarity(&r.signal)).max().unwrap_or(0)).collect();
        let entry = &entries[self.weighted(&weights)];
        let mut child = entry.schedule();
        let mut roll = self.below(5);
        // With nothing to add, remove or shift (no fault families configured
        // and none in the entry), the fault share goes to branching instead.
        if roll == 4 && config.faults.crash.is_none() && config.faults.pause.is_none() && config.faults.clock_skew.is_none() && config.faults.clock_jump.is_none() && entry.faults.is_empty() {
            roll = 0;
        }
        let timed: Vec<(u64, u64)> = entry.reached.iter().filter_map(|r| r.at_ns.map(|t| (t, rarity(&r.signal)))).collect();
        let all: Vec<String> = Stream::ALL.iter().map(|s| s.name().to_string()).collect();
        if roll < 3 && !timed.is_empty() {
            let pick = self.weighted(&timed.iter().map(|(_, w)| *w).collect::<Vec<_>>());
            let at_ns = timed[pick].0 + 1;
            child.branches.push(Branch { at_ns, streams: all, key: self.rng.next_u64() | 1 });
            return child;
        }
        if roll < 3 {
            // Nothing timed to branch after: a whole new future from a random
            // moment (from the start, at worst: a fresh run of the seed).
            let at_ns = self.below(entry.end_ns.max(1));
            child.branches.push(Branch { at_ns, streams: all, key: self.rng.next_u64() | 1 });
            return child;
        }
        if roll == 4 && self.mutate_faults(&mut child, entry.end_ns, config) {
            return child;
        }
        const REKEYABLE: [Stream; 5] = [Stream::Sched, Stream::Net, Stream::Disk, Stream::DiskLatency, Stream::Random];
        let stream = REKEYABLE[self.below(5) as usize];
        let at_ns = self.below(entry.end_ns.max(1));
        child.branches.push(Branch { at_ns, streams: vec![stream.name().to_string()], key: self.rng.next_u64() | 1 });
        child
    }

    /// Adds, removes or shifts one fault; false when none of those applies.
    fn mutate_faults(&mut self, child: &mut Schedule, end_ns: u64, config: &Config) -> bool {
        let faults = child.faults.get_or_insert_with(Vec::new);
        let new = self.new_fault(config, end_ns);
        let options = [!faults.is_empty(), !faults.is_empty(), new.is_some()];
        let available: Vec<usize> = (0..3).filter(|&i| options[i]).collect();
        if available.is_empty() {
            return false;
        }
        match available[self.below(available.len() as u64) as usize] {
            0 => {
                let i = self.below(faults.len() as u64) as usize;
                faults.remove(i);
            }
            1 => {
                let i = self.below(faults.len() as u64) as usize;
                let span = (end_ns / 4).max(1);
                let delta = self.below(2 * span) as i64 - span as i64;
                let at = (faults[i].at_ns() as i64 + delta).max(0) as u64;
                faults[i] = faults[i].clone().at(at);
                if let Fault::Crash { disk_op, .. } = &mut faults[i] {
                    *disk_op = None; // shifted in time, no longer tied to an op
                }
            }
            _ => faults.push(new.unwrap()),
        }
        faults.sort_by_key(Fault::at_ns);
        true
    }

    /// A fault of a configured family, on a targeted instance, at a random time.
    fn new_fault(&mut self, config: &Config, end_ns: u64) -> Option<Fault> {
        let f = &config.faults;
        let instances = config.instances();
        let mut families: Vec<(&str, &[String])> = Vec::new();
        if let Some(c) = &f.crash {
            families.push(("crash", &c.nodes));
        }
        if let Some(p) = &f.pause {
            families.push(("pause", &p.nodes));
        }
        if let Some(s) = &f.clock_skew {
            families.push(("clock_skew", &s.nodes));
        }
        if let Some(j) = &f.clock_jump {
            families.push(("clock_jump", &j.nodes));
        }
        if let Some(p) = &f.partition {
            families.push(("partition", &p.nodes));
        }
        if families.is_empty() {
            return None;
        }
        let (kind, nodes) = families[self.below(families.len() as u64) as usize];
        let targets: Vec<&String> = instances.iter().filter(|(n, _)| nodes.contains(&config.nodes[*n].name)).map(|(_, name)| name).collect();
        if targets.is_empty() {
            return None;
        }
        let node = targets[self.below(targets.len() as u64) as usize].clone();
        let at_ns = self.below(end_ns.max(1));
        let mut span = |s: seedfall_sim::config::Span| s.min_ns + self.below(s.max_ns - s.min_ns + 1);
        Some(match kind {
            "crash" => {
                let c = f.crash.as_ref().unwrap();
                Fault::Crash { node, at_ns, disk_op: None, restart_after_ns: c.restart_after.map(&mut span), torn: f.torn_writes }
            }
            "pause" => Fault::Pause { node, at_ns, duration_ns: span(f.pause.as_ref().unwrap().duration) },
            "clock_skew" => {
                let s = f.clock_skew.as_ref().unwrap();
                let duration_ns = span(s.duration);
                let drift = 1 + self.below(s.max_ppm);
                Fault::ClockSkew { node, at_ns, rate_ppm: 1_000_000 + drift, duration_ns }
            }
            "partition" => {
                use seedfall_sim::schedule::Direction;
                let p = f.partition.as_ref().unwrap();
                let duration_ns = span(p.duration);
                let one_way = p.one_way > 0.0 && (self.below(1_000_000) as f64) < p.one_way * 1e6;
                let direction = Direction::drawn(one_way, self.below(2));
                Fault::Partition { node, at_ns, duration_ns, peers: Vec::new(), direction }
            }
            _ => {
                let j = f.clock_jump.as_ref().unwrap();
                Fault::ClockJump { node, at_ns, delta_ns: self.below(j.max_ns.max(1)) as i64 + 1 }
            }
        })
    }
}
