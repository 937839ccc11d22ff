//! Guest profiles: which guest functions each node instance spends its
//! instructions in (`replay -profile FILE`, `run -profile FILE`).
//!
//! Sampling needs a profiling engine (`EngineOptions::guest_profiling`:
//! epoch checks compiled in) and someone outside the run ticking the epoch
//! (`Engine::tick_epoch`, from a timer thread in the CLI: the simulation
//! itself has no threads and reads no clock). At a tick, the node instance
//! running guest code stops at its next epoch check and records its wasm
//! stack, weighted by the guest instructions it ran since its previous
//! sample. The epoch deadline is re-armed whenever a host call returns, so
//! ticks that passed while the node was blocked or another node ran do not
//! land on the instruction after the wait.
//!
//! Sampling changes nothing a run can see: an epoch check costs no fuel,
//! and the callback only reads the stack and the fuel counter (tested: the
//! trace hash of a profiled replay equals the plain one's).
use std::collections::BTreeMap;

/// Distinct stacks a profile keeps; samples of further stacks are counted
/// as one `[more stacks than the profile keeps]` entry.
pub const STACKS_MAX: usize = 200_000;
/// Frames kept of one stack, innermost first (deeper frames are cut off).
pub const FRAMES_MAX: usize = 128;
/// Distinct function names a profile keeps.
pub const NAMES_MAX: usize = 1 << 20;

/// The name of the stack that collects samples past `STACKS_MAX`.
pub const OVERFLOW_FRAME: &str = "[more stacks than the profile keeps]";

/// One stack's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub samples: u64,
    /// Guest instructions (fuel) attributed to this stack.
    pub instructions: u64,
}

/// Samples of every node instance of the runs that shared it (one replay,
/// or every seed of a `run`).
#[derive(Debug, Default)]
pub struct GuestProfile {
    /// Interned function names (index = name id).
    pub names: Vec<String>,
    ids: BTreeMap<String, u32>,
    /// (node instance name, stack of name ids innermost first) -> totals.
    pub stacks: BTreeMap<(String, Vec<u32>), Counts>,
    /// Samples that fell in no stack the profile keeps.
    pub dropped: u64,
}

impl GuestProfile {
    fn intern(&mut self, name: &str) -> Option<u32> {
        if let Some(id) = self.ids.get(name) {
            return Some(*id);
        }
        if self.names.len() >= NAMES_MAX {
            return None;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), id);
        Some(id)
    }

    /// Adds one sample of `node`: its frames innermost first, as function
    /// names (`None` for a frame the module does not name).
    pub fn add<'a>(&mut self, node: &str, frames: impl Iterator<Item = (u32, Option<&'a str>)>, instructions: u64) {
        let mut stack = Vec::new();
        for (index, name) in frames.take(FRAMES_MAX) {
            let id = match name {
                Some(n) => self.intern(n),
                None => self.intern(&format!("wasm-function[{index}]")),
            };
            match id {
                Some(id) => stack.push(id),
                None => {
                    self.dropped += 1;
                    return;
                }
            }
        }
        let mut key = (node.to_string(), stack);
        if !self.stacks.contains_key(&key) && self.stacks.len() >= STACKS_MAX {
            let Some(id) = self.intern(OVERFLOW_FRAME) else {
                self.dropped += 1;
                return;
            };
            key.1 = vec![id];
        }
        let c = self.stacks.entry(key).or_default();
        c.samples += 1;
        c.instructions += instructions;
    }

    pub fn samples(&self) -> u64 {
        self.stacks.values().map(|c| c.samples).sum()
    }

    /// Per node instance: (samples, instructions), by name.
    pub fn per_node(&self) -> BTreeMap<&str, Counts> {
        let mut out: BTreeMap<&str, Counts> = BTreeMap::new();
        for ((node, _), c) in &self.stacks {
            let e = out.entry(node.as_str()).or_default();
            e.samples += c.samples;
            e.instructions += c.instructions;
        }
        out
    }
}

/// What a node instance keeps between samples: guest instructions counted
/// from the fuel the host sets and the guest then burns.
#[derive(Debug, Default)]
pub struct Mark {
    /// Guest instructions up to the last time the host set the fuel.
    counted: u64,
    /// The fuel the host last set.
    fuel_set: u64,
    /// Guest instructions at the previous sample.
    sampled: u64,
}

impl Mark {
    /// The host sets the fuel to `fuel` (entering or leaving a host call).
    pub fn fuel_set(&mut self, fuel: u64) {
        self.fuel_set = fuel;
    }

    /// A host call starts with `fuel_left`: the guest burnt the difference.
    pub fn fuel_seen(&mut self, fuel_left: u64) {
        self.counted += self.fuel_set.saturating_sub(fuel_left);
        self.fuel_set = fuel_left;
    }

    /// Guest instructions since the previous sample, at a sample with
    /// `fuel_left`.
    pub fn sample(&mut self, fuel_left: u64) -> u64 {
        let now = self.counted + self.fuel_set.saturating_sub(fuel_left);
        let since = now.saturating_sub(self.sampled);
        self.sampled = now;
        since
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instructions_between_samples_count_guest_fuel_across_host_calls() {
        let mut m = Mark::default();
        m.fuel_set(1000);
        assert_eq!(m.sample(900), 100);
        m.fuel_seen(850); // a host call: 50 more guest instructions
        m.fuel_set(800); // it charged 50 of host work: not the guest's
        m.fuel_seen(700);
        m.fuel_set(5000); // blocked: the watchdog budget again
        assert_eq!(m.sample(4990), 50 + 100 + 10);
        assert_eq!(m.sample(4990), 0);
    }

    #[test]
    fn stacks_are_interned_and_bounded() {
        let mut p = GuestProfile::default();
        p.add("a", [(1, Some("main.f")), (0, Some("main.main"))].into_iter(), 10);
        p.add("a", [(1, Some("main.f")), (0, Some("main.main"))].into_iter(), 5);
        p.add("b", [(7, None)].into_iter(), 1);
        assert_eq!(p.names, vec!["main.f", "main.main", "wasm-function[7]"]);
        assert_eq!(p.stacks[&("a".to_string(), vec![0, 1])], Counts { samples: 2, instructions: 15 });
        assert_eq!(p.per_node()["b"], Counts { samples: 1, instructions: 1 });
        let deep: Vec<(u32, Option<&str>)> = (0..FRAMES_MAX as u32 + 10).map(|i| (i, Some("f"))).collect();
        p.add("a", deep.into_iter(), 1);
        assert!(p.stacks.keys().all(|(_, s)| s.len() <= FRAMES_MAX));
        assert_eq!(p.samples(), 4);
    }
}
