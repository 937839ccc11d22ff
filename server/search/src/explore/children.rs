//! How exploration makes a child from the corpus.
//!
//! Every choice draws from the exploration's own ChaCha stream (seeded by
//! `-explore-seed`), one child at a time, before any child of the round
//! runs, so the children of a round do not depend on `-j` or on timing.
//!
//! 1. Weigh every signal by rarity (AFL++'s `rare` schedule in spirit: the
//!    fewer runs reached it fresh, the more children it gets) and recency
//!    (the newest discoveries get the most): `2^42 / 64^age / count`
//!    (age capped at 7), times `k + 1` (k capped at 15) for a signal other
//!    than coverage found at its run's k-th new moment, and at least 1.
//! 2. An entry's moments are the signals it is the best branch point of,
//!    grouped by virtual time, each weighing what its heaviest signal
//!    weighs (a signal at the run's very end has no future, so is none).
//!    Weigh each entry by its heaviest moment (an entry others have beaten
//!    on every signal gets nothing), pick an entry, then one of its moments.
//! 3. The operator (`operators`) comes from the round's shares.
//!    **fresh**: a new seed from the start. **branch**: just after the
//!    chosen signal, re-key every stream: the child replays the entry up to
//!    the rare state and lives a different future from there, with the
//!    faults still to come drawn again when the entry's were drawn from the
//!    config's rates. (For a watermark's best value, half the time at a
//!    random moment in the half of the run before it: a best value reached
//!    near the end leaves nothing to climb with.)
//! 4. **rekey**: re-key one stream the entry drew from (re-keying another
//!    changes nothing) at a random moment after the signal, nearer it more
//!    often; with none, branch as in 3.
//! 5. **faults**: add, remove or shift a fault; with nothing to add, remove
//!    or shift, branch as in 3.
use super::corpus::Corpus;
use super::growth::Growth;
use super::operators::Operator;
use super::signals::Signal;
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};
use seedfall_sim::streams::Stream;
use seedfall_sim::{Branch, Config, Fault, Schedule};

pub struct Chooser {
    rng: ChaCha20Rng,
    /// The seed range of round 1, and the fresh seeds drawn after it.
    seeds: crate::seeds::SeedRange,
    /// Added to every fresh seed (`fresh_offset`).
    fresh_offset: u64,
    fresh: u64,
}

/// How far apart the fresh seeds of two exploration seeds start.
pub const FRESH_BLOCK: u64 = 1_000_000_000;
/// Exploration seeds whose fresh seeds start in distinct blocks; the next
/// ones start over. 10^6 blocks of 10^9 keep every seed below 2^53, so it
/// survives a JSON reader that holds numbers as doubles (the editor's).
pub const FRESH_BLOCKS: u64 = 1_000_000;

/// Where the fresh seeds of exploration seed `explore_seed` start, past the
/// seed range: exploration seed 1 (the default) continues the range as a
/// plain sweep would (seeds 9, 10, ... after `-seeds 1-8`), seed K from
/// (K-1) x 10^9 on. Explorations with other seeds so sample other fresh
/// seeds, as sweeps of other ranges do, and none re-runs what a sweep of
/// the range already ran when K > 1.
pub fn fresh_offset(explore_seed: u64) -> u64 {
    explore_seed.wrapping_sub(1) % FRESH_BLOCKS * FRESH_BLOCK
}

/// The weight of the newest, rarest signal; each discovery event since
/// divides it by 2^RECENCY_SHIFT, and its count divides it too.
const WEIGHT_MAX: u64 = 1 << 42;
const RECENCY_SHIFT: u32 = 6;
/// Ages past this weigh as much as this.
const AGE_MAX: u32 = 7;
/// A signal other than a function at its run's k-th new moment weighs
/// k + 1 times more (up to this k): of two levels one run reached, the
/// deeper leads.
const MOMENT_MAX: u32 = 15;

/// A signal's weight (see the module docs).
pub fn weight(growth: &Growth, s: &Signal) -> u64 {
    let n = growth.count(s);
    let recency = WEIGHT_MAX >> (RECENCY_SHIFT * growth.age(s).min(AGE_MAX));
    // Functions get no such lead: a run's last new functions are often
    // its way out, past the draw that mattered.
    let depth = if s.is_coverage() { 1 } else { 1 + u64::from(growth.moment(s).min(MOMENT_MAX)) };
    (recency / n).saturating_mul(depth).max(1)
}

/// A branch point: its time, its weight, whether a watermark's best value
/// was reached there.
type Moment = (u64, u64, bool);

/// One round's view of the corpus: per entry, its weight and its moments.
pub struct Plan {
    entries: Vec<(usize, u64, Vec<Moment>)>,
}

/// An entry's branch points as distinct moments: signals that happened at
/// the same moment (the functions a rare path entered, and the property
/// beside them) are one choice, weighing what the heaviest of them weighs,
/// so a burst of new functions does not drown one later rare moment.
fn moments(mut points: Vec<Moment>) -> Vec<Moment> {
    points.sort();
    let mut out: Vec<Moment> = Vec::with_capacity(points.len());
    for (t, w, mark) in points {
        match out.last_mut() {
            Some(last) if last.0 == t => {
                last.1 = last.1.max(w);
                last.2 |= mark;
            }
            _ => out.push((t, w, mark)),
        }
    }
    out
}

impl Plan {
    pub fn new(corpus: &Corpus, growth: &Growth) -> Plan {
        // (best of something, its moments) per entry.
        let mut per: Vec<(bool, Vec<Moment>)> = vec![(false, Vec::new()); corpus.entries.len()];
        for (s, b) in &corpus.best {
            let (best, points) = &mut per[b.entry];
            *best = true;
            // A signal at the run's very end has no future to re-key.
            if b.at_ns < corpus.entries[b.entry].end_ns {
                points.push((b.at_ns, weight(growth, s), matches!(s, Signal::Watermark { .. })));
            }
        }
        // An entry best only at its very end still gets the least weight:
        // a child of it branches at a random moment.
        let per = per.into_iter().map(|(best, points)| {
            let points = moments(points);
            let top = points.iter().map(|p| p.1).max().unwrap_or(u64::from(best));
            (top, points)
        });
        Plan { entries: per.enumerate().filter(|(_, (w, _))| *w > 0).map(|(i, (w, p))| (i, w, p)).collect() }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl Chooser {
    /// `fresh_offset`: added to every fresh seed (`fresh_offset()` of the
    /// user's exploration seed, the same for every shard of it).
    pub fn new(explore_seed: u64, seeds: crate::seeds::SeedRange, fresh_offset: u64) -> Chooser {
        let mut rng = ChaCha20Rng::seed_from_u64(explore_seed);
        rng.set_stream(0x6578_706c_6f72_65);
        Chooser { rng, seeds, fresh_offset, fresh: 0 }
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

    /// An index drawn with odds proportional to `weights` (uniform when all
    /// are 0). Weights whose sum would not fit 63 bits are scaled down alike.
    fn weighted(&mut self, weights: &[u64]) -> usize {
        let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
        let shift = (128 - sum.leading_zeros()).saturating_sub(63);
        let scaled = |w: u64| w >> shift;
        let total: u64 = weights.iter().map(|&w| scaled(w)).sum();
        if total == 0 {
            return self.below(weights.len() as u64) as usize;
        }
        let mut x = self.below(total);
        for (i, &w) in weights.iter().enumerate() {
            if x < scaled(w) {
                return i;
            }
            x -= scaled(w);
        }
        unreachable!("x < total")
    }

    /// A seed for a fresh child: the next one a plain sweep of the seed
    /// range would run after it (from `fresh_offset` on), so explore runs
    /// every seed such a sweep would, in order, at its fresh share of the
    /// runs.
    pub fn fresh_seed(&mut self) -> u64 {
        let seed = self.seeds.after(self.fresh).saturating_add(self.fresh_offset);
        self.fresh += 1;
        seed
    }

    /// Whether operator `faults` can make a child: a fault family in the
    /// config, or an entry with faults to remove or shift.
    pub fn faults_usable(corpus: &Corpus, config: &Config) -> bool {
        let f = &config.faults;
        let families = f.crash.is_some() || f.pause.is_some() || f.clock_skew.is_some() || f.clock_jump.is_some() || f.partition.is_some();
        families || corpus.entries.iter().any(|e| !e.faults.is_empty())
    }

    /// A child made by operator `op` (as the module docs describe), its
    /// parent (whose snapshot it may continue from; none for a fresh seed),
    /// and the operator that made it (another when `op` could not apply).
    pub fn child(&mut self, op: Operator, plan: &Plan, corpus: &Corpus, config: &Config) -> (Option<Schedule>, Schedule, Operator) {
        if op == Operator::Fresh || plan.is_empty() {
            return (None, Schedule::seed(self.fresh_seed()), Operator::Fresh);
        }
        let (idx, _, points) = &plan.entries[self.weighted(&plan.entries.iter().map(|e| e.1).collect::<Vec<_>>())];
        let entry = &corpus.entries[*idx];
        let parent = entry.schedule();
        let mut child = parent.clone();
        let end_ns = entry.end_ns.max(1);
        // Just after the chosen signal; with none to branch after (a run
        // that reached nothing before its end), a random moment (from the
        // start, at worst: a fresh run of the seed).
        let after = if points.is_empty() {
            self.below(end_ns)
        } else {
            let (t, _, mark) = points[self.weighted(&points.iter().map(|p| p.1).collect::<Vec<_>>())];
            // A watermark's best value may have come too late to climb on
            // from: half the time, branch somewhere in the half before it.
            if mark && t > 1 && self.below(2) == 0 {
                t / 2 + self.below(t - t / 2)
            } else {
                t + 1
            }
        };
        if op == Operator::Faults {
            // From the faults the entry's run applied, exactly.
            let mut exact = Schedule { faults: Some(entry.faults.clone()), ..parent.clone() };
            if self.mutate_faults(&mut exact, entry.end_ns, config) {
                return (Some(parent), exact, Operator::Faults);
            }
        }
        // The faults stream is worth re-keying alone only when the entry's
        // faults are drawn from the rates (with exact faults it draws none).
        let rekeyable = [Stream::Sched, Stream::Net, Stream::Disk, Stream::DiskLatency, Stream::Random, Stream::Faults];
        let drawn: Vec<Stream> = rekeyable.into_iter().filter(|s| (*s != Stream::Faults || entry.drawn) && entry.stream_draws.get(*s as usize).is_some_and(|&n| n > 0)).collect();
        if op == Operator::Rekey && !drawn.is_empty() && after < end_ns {
            let stream = drawn[self.below(drawn.len() as u64) as usize];
            // Nearer the chosen moment more often (a quarter of the way to
            // the end on average): the later a moment, the likelier the
            // draws that mattered are already behind it.
            let span = self.below(end_ns - after) + 1;
            let at_ns = after + self.below(span);
            child.branches.push(Branch { at_ns, streams: vec![stream.name().to_string()], key: self.rng.next_u64() | 1 });
            return (Some(parent), child, Operator::Rekey);
        }
        let all: Vec<String> = Stream::ALL.iter().map(|s| s.name().to_string()).collect();
        child.branches.push(Branch { at_ns: after, streams: all, key: self.rng.next_u64() | 1 });
        (Some(parent), child, Operator::Branch)
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
        if let Some(d) = &f.disk_full {
            families.push(("disk_full", &d.nodes));
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
                let restart_after_ns = c.restart_after.map(&mut span);
                let kill = c.kill > 0.0 && (self.below(1_000_000) as f64) < c.kill * 1e6;
                Fault::Crash { node, at_ns, disk_op: None, restart_after_ns, torn: f.torn_writes && !kill, kill }
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
            "disk_full" => Fault::DiskFull { node, at_ns, duration_ns: span(f.disk_full.as_ref().unwrap().duration) },
            _ => {
                let j = f.clock_jump.as_ref().unwrap();
                Fault::ClockJump { node, at_ns, delta_ns: self.below(j.max_ns.max(1)) as i64 + 1 }
            }
        })
    }
}
