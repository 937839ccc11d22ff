//! The operators that make a child, and how each round's children are
//! shared among them: a bandit over what each operator has yielded so far in
//! this exploration.
//!
//! - **fresh**: the next seed a plain sweep of the seed range would run
//!   after it, from the start. It is the one operator that can find what no
//!   corpus entry leads to, so it never gets less than `FRESH_MIN` of a
//!   round, and explore runs every seed such a sweep would, in order.
//! - **branch**: an entry up to one of its signals, then every stream
//!   re-keyed (with faults drawn from the config's rates, the faults still
//!   to come are drawn again).
//! - **rekey**: one stream the entry drew from, re-keyed at a moment after
//!   one of its signals.
//! - **faults**: an entry with one fault added, removed or shifted.
//!
//! A child's yield is what its new signals are worth (`worth`) and whether
//! it failed; the bandit learns from it capped at one signal (`reward`). An
//! operator's rate is its reward per child over the rounds so far, each
//! earlier round discounted by `DECAY` so what it did lately counts most,
//! from a small prior (`PRIOR_WORTH` over `PRIOR_CHILDREN`) that only keeps
//! an untried operator from scoring 0. Each round's shares follow the rates squared (the best operator
//! leads clearly, as a bandit should), over floors: fresh's share is at least
//! `FRESH_MIN` and grows to what its rate earns; every other operator keeps
//! `OTHER_MIN` so a late bloomer is still tried. Everything is integer
//! arithmetic in fixed point from the merged results, so the shares, like
//! the children, depend only on the corpus, the flags and `-explore-seed`.
use super::signals::{Reached, Signal};
use seedfall_sim::Program;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    Fresh,
    Branch,
    Rekey,
    Faults,
}

impl Operator {
    pub const ALL: [Operator; 4] = [Operator::Fresh, Operator::Branch, Operator::Rekey, Operator::Faults];

    pub fn name(self) -> &'static str {
        match self {
            Operator::Fresh => "fresh",
            Operator::Branch => "branch",
            Operator::Rekey => "rekey",
            Operator::Faults => "faults",
        }
    }
}

/// Shares are parts of this.
pub const SHARE_ONE: u64 = 1_000_000;
/// Fresh seeds' least share of a round's children.
pub const FRESH_MIN: u64 = SHARE_ONE / 10;
/// Every other usable operator's least share.
pub const OTHER_MIN: u64 = SHARE_ONE / 20;
/// What a new signal is worth, in thousandths: a property outcome, a fault
/// in a state or a better watermark is the unit.
pub const WORTH_SIGNAL: u64 = 1_000;
/// A function of the program's own code or its libraries, first entered.
pub const WORTH_FUNCTION: u64 = 100;
/// A function of the language's runtime or standard library, first
/// entered: printing, allocating and scheduling reach new ones all the time.
pub const WORTH_RUNTIME_FUNCTION: u64 = 5;
/// A basic-block edge with a new hit-count bucket (`-coverage edges`).
pub const WORTH_EDGE: u64 = 20;
/// A failing child: what the exploration is for.
pub const WORTH_FAILURE: u64 = 20_000;
/// The prior every operator starts from: this much worth over this many
/// children (a thousandth of a signal per child: measured yields outweigh
/// it at once, so a big server's fresh seeds, which now and then reach new
/// code, lead corpus operators that reach none).
pub const PRIOR_WORTH: u64 = 1;
pub const PRIOR_CHILDREN: u64 = 1;

/// Which code a function belongs to: for what first entering it is worth
/// (the program's and its libraries' alike), and for which new functions a
/// round shows first (the program's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// The program's own code: Go's `main` package, a Rust path outside the
    /// standard library.
    Own,
    /// A Go module the program uses (`github.com/...`).
    Library,
    /// The language's runtime or standard library.
    Runtime,
}

/// Classifies a (demangled) function name. Go: a package path whose first
/// element has no dot (`runtime`, `sync`, `net/http`, `internal/poll`) is the
/// standard library, except `main`; a module path (`github.com/...`) is a
/// library. Rust: `std`, `core`, `alloc` and their impls are the runtime.
pub fn code_of(name: &str) -> Code {
    let rust_std = ["std::", "core::", "alloc::", "<std", "<core", "<alloc", "__rust", "__rdl", "__rg"].iter().any(|p| name.starts_with(p));
    if rust_std {
        return Code::Runtime;
    }
    if name.contains("::") {
        return Code::Own;
    }
    // Go: the package path ends at the first '.' after its last '/'.
    let path_end = name.rfind('/').map_or(0, |i| i + 1);
    let package = match name[path_end..].find('.') {
        Some(dot) => &name[..path_end + dot],
        None => return Code::Runtime, // a wasm import, a C or runtime symbol
    };
    let first = package.split('/').next().unwrap_or("");
    if package == "main" {
        Code::Own
    } else if first.contains('.') {
        Code::Library
    } else {
        Code::Runtime
    }
}

/// What the new signals `new` of one run are worth.
pub fn worth(program: &Program, new: &[Reached]) -> u64 {
    new.iter()
        .map(|r| match &r.signal {
            Signal::Function { node, index } => match program.function_names.get(node).and_then(|m| m.get(index)) {
                Some(n) if code_of(&seedfall_sim::failure::demangle(n)) == Code::Runtime => WORTH_RUNTIME_FUNCTION,
                _ => WORTH_FUNCTION,
            },
            Signal::Edge { .. } => WORTH_EDGE,
            _ => WORTH_SIGNAL,
        })
        .sum()
}

/// What one operator's children yielded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Yield {
    pub children: u64,
    /// New signals (functions and edges included).
    pub new_signals: u64,
    pub failures: u64,
    /// What the new signals and failures are worth (`worth`), in thousandths.
    pub worth: u64,
    /// What the bandit learns from: each child's worth capped at one signal
    /// (`reward`), so a burst of functions one lucky child entered does not
    /// outweigh many children that each found something.
    #[serde(skip)]
    pub reward: u64,
}

impl Yield {
    pub fn add(&mut self, other: &Yield) {
        self.children += other.children;
        self.new_signals += other.new_signals;
        self.failures += other.failures;
        self.worth += other.worth;
        self.reward += other.reward;
    }

    /// Counts one child that reached `new` signals worth `worth`.
    pub fn child(&mut self, new: usize, worth: u64, failed: bool) {
        self.children += 1;
        self.new_signals += new as u64;
        self.failures += u64::from(failed);
        self.worth += worth + if failed { WORTH_FAILURE } else { 0 };
        self.reward += reward(worth, failed);
    }
}

/// What one child teaches the bandit: its worth up to one signal's, or a
/// failure's.
pub fn reward(worth: u64, failed: bool) -> u64 {
    if failed {
        WORTH_FAILURE
    } else {
        worth.min(WORTH_SIGNAL)
    }
}

/// Per operator (`Operator::ALL` order).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Yields(pub [Yield; 4]);

impl Yields {
    pub fn of(&mut self, op: Operator) -> &mut Yield {
        &mut self.0[op as usize]
    }

    pub fn add(&mut self, other: &Yields) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            a.add(b);
        }
    }

}

/// Each round's yields fold in after the earlier ones are discounted by
/// `DECAY` (of 1,000): what an operator did lately counts most, so an early
/// lucky child stops steering after a few rounds of nothing.
pub const DECAY: u64 = 980;

/// What the shares are set from: per operator, discounted reward and
/// children (in thousandths of a child).
#[derive(Clone, Debug, Default)]
pub struct Bandit {
    reward: [u64; 4],
    children: [u64; 4],
}

impl Bandit {
    pub fn learn(&mut self, round: &Yields) {
        for (i, y) in round.0.iter().enumerate() {
            self.reward[i] = self.reward[i] * DECAY / 1000 + y.reward;
            self.children[i] = self.children[i] * DECAY / 1000 + y.children * 1000;
        }
    }

    /// Each operator's share of the next round (parts of `SHARE_ONE`,
    /// summing to it); `usable[i]` false gives operator i nothing.
    pub fn shares(&self, usable: [bool; 4]) -> [u64; 4] {
        assert!(usable[Operator::Fresh as usize], "a fresh seed is always possible");
        // Rate per child, squared into a score (u128: no overflow).
        let score: Vec<u128> = (0..4)
            .map(|i| {
                if !usable[i] {
                    return 0;
                }
                let rate = u128::from(self.reward[i] + PRIOR_WORTH) * 1_000_000 / u128::from(self.children[i] + PRIOR_CHILDREN * 1000);
                rate * rate
            })
            .collect();
        let total: u128 = score.iter().sum();
        let others = usable.iter().skip(1).filter(|&&on| on).count() as u64;
        let free = SHARE_ONE - FRESH_MIN - OTHER_MIN * others;
        let mut shares = [0u64; 4];
        for i in 0..4 {
            if usable[i] {
                let floor = if i == 0 { FRESH_MIN } else { OTHER_MIN };
                shares[i] = floor + (u128::from(free) * score[i] / total.max(1)) as u64;
            }
        }
        // Rounding leftovers go to fresh.
        let sum: u64 = shares.iter().sum();
        shares[0] += SHARE_ONE - sum;
        shares
    }
}

/// The operators of a round's `n` children, from `shares`: smooth weighted
/// round-robin (each child adds every share to its operator's credit and
/// goes to the most credited, which pays `SHARE_ONE`), so a round follows
/// the shares exactly up to one child, and a share too small for one child
/// this round still earns children over the next ones through `credit`.
pub fn split(n: usize, shares: [u64; 4], credit: &mut [i64; 4]) -> Vec<Operator> {
    assert_eq!(shares.iter().sum::<u64>(), SHARE_ONE);
    for i in 0..4 {
        if shares[i] == 0 {
            credit[i] = 0; // an operator that cannot apply is owed nothing
        }
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        for i in 0..4 {
            credit[i] += shares[i] as i64;
        }
        let i = (0..4).filter(|&i| shares[i] > 0).max_by_key(|&i| (credit[i], std::cmp::Reverse(i))).expect("fresh always has a share");
        credit[i] -= SHARE_ONE as i64;
        out.push(Operator::ALL[i]);
    }
    // Credits stay within a few children's worth: the shares sum to one.
    debug_assert!(credit.iter().all(|c| c.abs() <= 4 * SHARE_ONE as i64));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_is_told_from_its_name() {
        assert_eq!(code_of("runtime.mallocgc"), Code::Runtime);
        assert_eq!(code_of("net/http.(*conn).serve"), Code::Runtime);
        assert_eq!(code_of("internal/poll.(*FD).Write"), Code::Runtime);
        assert_eq!(code_of("main.stageOne"), Code::Own);
        assert_eq!(code_of("github.com/nats-io/nats-server/v2/server.(*stream).create"), Code::Library);
        assert_eq!(code_of("go.etcd.io/etcd/server/v3/wal.(*WAL).Save"), Code::Library);
        assert_eq!(code_of("std::io::Write::write_all"), Code::Runtime);
        assert_eq!(code_of("<alloc::vec::Vec<T> as core::ops::Drop>::drop"), Code::Runtime);
        assert_eq!(code_of("kvlog::append"), Code::Own);
        assert_eq!(code_of("__wasm_call_ctors"), Code::Runtime);
    }

    #[test]
    fn fresh_keeps_its_floor_and_the_best_operator_leads() {
        let mut y = Yields::default();
        // Branch found a signal a child; fresh, rekey and faults nothing.
        for _ in 0..10 {
            y.of(Operator::Branch).child(1, WORTH_SIGNAL, false);
            for op in [Operator::Fresh, Operator::Rekey, Operator::Faults] {
                y.of(op).child(0, 0, false);
            }
        }
        let mut bandit = Bandit::default();
        for _ in 0..10 {
            bandit.learn(&y);
        }
        let s = bandit.shares([true; 4]);
        assert_eq!(s.iter().sum::<u64>(), SHARE_ONE);
        assert!(s[0] >= FRESH_MIN && s[0] < FRESH_MIN + SHARE_ONE / 100, "fresh at its floor: {s:?}");
        assert!(s[1] > SHARE_ONE * 3 / 4, "branch leads: {s:?}");
        assert!(s[2] >= OTHER_MIN && s[3] >= OTHER_MIN);
        // Nothing tried yet: alike, above the floors.
        let flat = Bandit::default().shares([true, true, true, false]);
        assert_eq!(flat[3], 0, "an unusable operator gets nothing");
        assert!(flat[0] > flat[1] && flat[1] == flat[2], "{flat:?}");
        // Fresh seeds reach a new function of the program now and then
        // (one in 20 children), the corpus operators nothing: as on a big
        // server whose bug needs fresh early draws, fresh seeds lead.
        let mut bandit = Bandit::default();
        for round in 0..40 {
            let mut dry = Yields::default();
            for op in Operator::ALL {
                let worth = if op == Operator::Fresh && round % 20 == 0 { WORTH_FUNCTION } else { 0 };
                dry.of(op).child(usize::from(worth > 0), worth, false);
            }
            bandit.learn(&dry);
        }
        let s = bandit.shares([true; 4]);
        assert!(s[0] > SHARE_ONE * 7 / 10, "fresh seeds lead: {s:?}");
        assert!(s[1] >= OTHER_MIN && s[3] >= OTHER_MIN, "{s:?}");
    }

    #[test]
    fn a_split_gives_every_child_and_pays_small_shares_over_rounds() {
        let shares = [SHARE_ONE / 10, SHARE_ONE * 8 / 10, SHARE_ONE / 20, SHARE_ONE / 20];
        let mut credit = [0; 4];
        let mut total = [0usize; 4];
        for _ in 0..10 {
            let ops = split(8, shares, &mut credit);
            assert_eq!(ops.len(), 8);
            for op in ops {
                total[op as usize] += 1;
            }
        }
        // 80 children: 8, 64, 4, 4 exactly, or within one of it.
        for (got, want) in total.iter().zip([8usize, 64, 4, 4]) {
            assert!(got.abs_diff(want) <= 1, "{total:?}");
        }
    }
}
