//! Host work: what a guest makes the host do counts as if the guest had run
//! instructions itself.
//!
//! The watchdog (`limits.watchdog_instructions`) and the virtual clock count
//! wasm fuel. Without this module a guest could hold a run for minutes of
//! wall time while spending almost no fuel: a loop of failing `memory.grow`
//! (each costs the host far more than one instruction), or of `poll_oneoff`
//! calls with thousands of subscriptions. So every host call costs a base
//! charge plus a charge per unit of work (bytes moved, subscriptions read,
//! grow attempts), taken from the same fuel and turned into virtual time the
//! same way. The charges are deliberately generous: at the default of one
//! virtual nanosecond per instruction, a unit is more than the host's wall
//! time for it, so a run's wall time stays bounded per virtual second.

/// Base charge of any host call, in instruction equivalents.
pub const HOST_CALL: u64 = 100;
/// Per poll subscription read and checked.
pub const PER_SUBSCRIPTION: u64 = 200;
/// Bytes the host copies per instruction equivalent.
pub const BYTES_PER_UNIT: u64 = 16;
/// Per `memory.grow` or `table.grow` attempt, whether it succeeds or fails.
pub const PER_GROW: u64 = 20_000;
/// Table elements initialised per instruction equivalent.
pub const TABLE_ELEMENTS_PER_UNIT: u64 = 4;
/// Per directory entry `fd_readdir` lists.
pub const PER_DIR_ENTRY: u64 = 20;
/// `random_get` costs this many times a copy of as many bytes (drawing
/// from a ChaCha stream is dearer than copying).
pub const RANDOM_PER_COPY: u64 = 4;

/// The units `bytes` bytes cost.
pub fn bytes(n: u64) -> u64 {
    n / BYTES_PER_UNIT
}

/// Distinct kinds of charged work one node keeps apart (a fixed set of
/// static labels: host call names and the grows).
const KINDS_MAX: usize = 32;

/// Host work of one node instance since it last blocked.
#[derive(Default, Debug)]
pub struct Work {
    /// Charged but not yet taken from the store's fuel (grows happen in wasm
    /// code, where the host cannot touch the fuel; the next host call takes it).
    pending: u64,
    /// Units charged since the node last blocked.
    since_block: u64,
    /// Host calls since the node last blocked (each costs [`HOST_CALL`]).
    calls: u64,
    /// Per kind: (calls, units), since the node last blocked.
    kinds: Vec<(&'static str, u64, u64)>,
}

impl Work {
    /// One host call's base charge (kept apart from `kinds`: it is on
    /// every call's path).
    pub fn call(&mut self) {
        self.calls += 1;
        self.since_block = self.since_block.saturating_add(HOST_CALL);
    }

    pub fn charge(&mut self, kind: &'static str, units: u64) {
        self.since_block = self.since_block.saturating_add(units);
        if let Some(k) = self.kinds.iter_mut().find(|k| k.0 == kind) {
            k.1 += 1;
            k.2 = k.2.saturating_add(units);
        } else if self.kinds.len() < KINDS_MAX {
            self.kinds.push((kind, 1, units));
        }
    }

    /// A grow attempt, charged at the next host call (or the next block).
    pub fn grow(&mut self, kind: &'static str, units: u64) {
        self.pending = self.pending.saturating_add(units);
        self.charge(kind, units);
    }

    pub fn take_pending(&mut self) -> u64 {
        std::mem::take(&mut self.pending)
    }

    pub fn since_block(&self) -> u64 {
        self.since_block
    }

    /// Blocking is progress: the watchdog starts over.
    pub fn reset(&mut self) {
        self.pending = 0;
        self.since_block = 0;
        self.calls = 0;
        self.kinds.clear();
    }

    /// "poll_oneoff subscriptions x2441 (1999667200 instructions), ...": the kinds
    /// that cost most, for the watchdog's message.
    pub fn summary(&self) -> String {
        let mut kinds = self.kinds.clone();
        if self.calls > 0 {
            kinds.push(("host calls", self.calls, self.calls.saturating_mul(HOST_CALL)));
        }
        kinds.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        let parts: Vec<String> = kinds.iter().take(3).map(|(k, calls, units)| format!("{k} x{calls} ({units} instructions)")).collect();
        parts.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_the_costliest_kinds_first() {
        let mut w = Work::default();
        for _ in 0..3 {
            w.charge("fd_write", 10);
        }
        w.grow("failed memory.grow", PER_GROW);
        assert_eq!(w.since_block(), 30 + PER_GROW);
        assert_eq!(w.summary(), "failed memory.grow x1 (20000 instructions), fd_write x3 (30 instructions)");
        assert_eq!(w.take_pending(), PER_GROW);
        assert_eq!(w.take_pending(), 0);
        w.reset();
        assert_eq!((w.since_block(), w.summary().as_str()), (0, ""));
    }

    #[test]
    fn kinds_are_bounded() {
        let mut w = Work::default();
        let names: Vec<&'static str> = (0..100).map(|i| &*Box::leak(format!("k{i}").into_boxed_str())).collect();
        for n in names {
            w.charge(n, 1);
        }
        assert_eq!(w.kinds.len(), KINDS_MAX);
        assert_eq!(w.since_block(), 100);
    }
}
