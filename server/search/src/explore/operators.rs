//! The operators that make a child, and how each round's children are
//! shared among them: a bandit over what each operator has yielded so far in
//! this exploration.
//!
//! - **fresh**: the next seed of a plain sweep continuing the seed range
//!   (`children::fresh_offset`: exploration seed 1 continues the range
//!   itself, seed K a block of its own). It is the one operator that can
//!   find what no corpus entry leads to, and the sweep explore must never
//!   lose to.
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
//! from a small prior (`PRIOR_WORTH` over `PRIOR_CHILDREN`, `PRIOR_LEAD`
//! times more for the side that gets ties) that decides only ties.
//!
//! Shares are two choices by rates squared (the better leads clearly, as a
//! bandit should): fresh seeds against the corpus, its operators pooled, so
//! three corpus operators that yield nothing do not outvote fresh seeds
//! three to one; then the corpus's part among its operators. Floors keep
//! every usable operator tried (`OTHER_MIN`). Fresh seeds' floor depends on
//! **progress** (`progress`: a `Sometimes` property come true, a better
//! watermark, a function of the program's own code): for `PROGRESS_WINDOW`
//! corpus children after the last progress, fresh seeds keep `FRESH_MIN`
//! and the corpus may take the rest; with no progress in that long (or
//! none yet), fresh seeds keep `FRESH_IDLE`, so on a server whose corpus
//! only ever varies crashes and connections, explore is mostly the sweep.
//! Progress a fresh seed made is credited to the corpus (`Bandit::learn`).
//! Everything is integer arithmetic in fixed point from the merged results,
//! so the shares, like the children, depend only on the corpus, the flags
//! and `-explore-seed`.
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
/// Fresh seeds' least share of a round's children while the corpus makes
/// progress (`PROGRESS_WINDOW`).
pub const FRESH_MIN: u64 = SHARE_ONE / 10;
/// Fresh seeds' least share otherwise: an exploration whose corpus leads
/// nowhere new is mostly the sweep it must not lose to.
pub const FRESH_IDLE: u64 = SHARE_ONE * 3 / 4;
/// Corpus children after the last progress (`progress`) during which the
/// corpus may take all but `FRESH_MIN` of a round: the coverage puzzle's
/// second door takes about 400 children behind its first.
pub const PROGRESS_WINDOW: u64 = 1024;
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
/// children (thousandths of a signal per child: measured yields outweigh
/// it at once). It decides only ties, when nothing yields, and the side
/// that gets them holds `PRIOR_LEAD` times the other's prior (about four
/// children in five once the children balance the rates): the corpus while
/// it makes progress (`PROGRESS_WINDOW`: a level or a stage is behind it,
/// the next may take hundreds of children), fresh seeds otherwise (the
/// sweep an exploration must never lose to: corpus children of a server
/// whose bug any run may hit fail less often than fresh ones, on
/// nats-server's 6600 1 in 27 to 1 in 118 against 1 in 9).
pub const PRIOR_WORTH: u64 = 1;
pub const PRIOR_LEAD: u64 = 8;
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

/// The first elements of the standard library's package paths
/// (`net/http`, `internal/poll`, `vendor/golang.org/x/net/...`), and the
/// linker's own (`type:.eq.x`, written `type_.eq.x`): what a Go function name
/// that starts with one of them, followed by the end of the package (`.`)
/// or a path separator, belongs to. `go` alone is no package (`go/ast` is),
/// so `go.etcd.io/...` stays a module path.
const GO_STD_ROOTS: &[&str] = &[
    "archive", "bufio", "builtin", "bytes", "cmp", "compress", "container", "context", "crypto", "database", "debug", "embed", "encoding", "errors", "expvar", "flag", "fmt", "go",
    "hash", "html", "image", "index", "internal", "io", "iter", "log", "maps", "math", "mime", "net", "os", "path", "plugin", "reflect", "regexp", "runtime", "slices", "sort",
    "strconv", "strings", "structs", "sync", "syscall", "testing", "text", "time", "unicode", "unique", "unsafe", "vendor", "weak", "type", "gclocals",
];

/// Classifies a (demangled) function name. Go: a package path whose first
/// element has no dot (`runtime`, `sync`, `net/http`, `internal/poll`) is the
/// standard library, except `main`; a module path (`github.com/...`) is a
/// library. Rust: `std`, `core`, `alloc` and their impls are the runtime.
///
/// Go's wasm linker writes names with every character other than a letter,
/// digit, `_` or `.` as `_` (`github.com_nats_io_nats_server_v2_server.__stream_.create`
/// for `github.com/nats-io/nats-server/v2/server.(*stream).create`,
/// `internal_poll.__FD_.Write`), so a path's first element ends at its first
/// `_` as well as at a `/`.
pub fn code_of(name: &str) -> Code {
    let rust_std = ["std::", "core::", "alloc::", "<std", "<core", "<alloc", "__rust", "__rdl", "__rg"].iter().any(|p| name.starts_with(p));
    if rust_std {
        return Code::Runtime;
    }
    if name.contains("::") {
        return Code::Own;
    }
    // The leading identifier, and what ends it: `.` ends a package
    // (`main.f`, `runtime.f`) or a domain label (`github.com`); `/` or its
    // mangled `_` goes on to a deeper package (`net/http`, `net_http`).
    let ident_end = name.find(['.', '/', '_']).unwrap_or(name.len());
    let (ident, next) = (&name[..ident_end], name[ident_end..].chars().next());
    if ident.is_empty() || next.is_none() {
        return Code::Runtime; // `_rt0_wasm_wasip1`, `memeqbody`: the runtime's own symbols
    }
    if ident == "main" && next == Some('.') {
        return Code::Own;
    }
    let std_root = GO_STD_ROOTS.contains(&ident) && !(ident == "go" && next == Some('.'));
    if std_root {
        return Code::Runtime;
    }
    // Every package-qualified Go symbol holds a dot; outside the standard
    // library it is a module's: one with a domain (`github.com`, `go.etcd.io`)
    // or the user's own module under a plain name.
    if name.contains('.') {
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
            // A connection made is ordinary (every client makes them); one
            // refused, reset or timed out is a state worth building on.
            Signal::Net { event, .. } if event.starts_with("connected to ") => WORTH_FUNCTION,
            _ => WORTH_SIGNAL,
        })
        .sum()
}

/// What of the new signals `new` of one run is progress, a place the
/// corpus can build on: a `Sometimes` or `Reachable` property that came
/// true outside fault windows (the program says reaching it is an achievement: a level, a
/// stage), a watermark's new best value, and with `functions` (for a
/// program without the SDK's properties) a function of the program's own
/// code first entered (a stage, a door). Properties that hold in every run (an `Always` true), faults,
/// crashes, the network and library code are not: every run meets them.
pub fn progress(program: &Program, outcome: &seedfall_sim::Outcome, new: &[Reached], functions: bool) -> u64 {
    progress_of(program, outcome, new, functions).map(|(_, w)| w).sum()
}

/// `progress`, signal by signal (those worth nothing left out).
pub fn progress_of<'a>(program: &'a Program, outcome: &'a seedfall_sim::Outcome, new: &'a [Reached], functions: bool) -> impl Iterator<Item = (&'a Signal, u64)> + 'a {
    use seedfall_sim::props::PropertyKind;
    new.iter()
        .map(move |r| (&r.signal, match &r.signal {
            // Outside any fault window: the same property true during a
            // crash is the crash's timing, not a new place to build on.
            Signal::Property { message, cond: true, during } if during.is_empty() => match outcome.properties.get(message).map(|p| p.kind) {
                Some(PropertyKind::Sometimes | PropertyKind::Reachable) => WORTH_SIGNAL,
                _ => 0,
            },
            Signal::Watermark { .. } => WORTH_SIGNAL,
            Signal::Function { node, index } if functions => match program.function_names.get(node).and_then(|m| m.get(index)) {
                Some(n) if code_of(&seedfall_sim::failure::demangle(n)) == Code::Own => WORTH_FUNCTION,
                _ => 0,
            },
            _ => 0,
        }))
        .filter(|(_, w)| *w > 0)
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
        self.child_learning(new, worth, worth, failed);
    }

    /// `child`, the bandit learning from `learned` of the worth (a fresh
    /// child's progress is credited to the corpus instead: `Bandit::learn`).
    pub fn child_learning(&mut self, new: usize, worth: u64, learned: u64, failed: bool) {
        assert!(learned <= worth);
        self.children += 1;
        self.new_signals += new as u64;
        self.failures += u64::from(failed);
        self.worth += worth + if failed { WORTH_FAILURE } else { 0 };
        self.reward += reward(learned, failed);
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
/// children (in thousandths of a child), and the progress credited to the
/// corpus as a whole.
#[derive(Clone, Debug, Default)]
pub struct Bandit {
    reward: [u64; 4],
    children: [u64; 4],
    corpus_credit: u64,
    /// Corpus children left before the corpus, with no progress since,
    /// falls back to `FRESH_IDLE` (0: none made yet).
    window: u64,
}

impl Bandit {
    /// Folds in a round: what each operator's children yielded, and
    /// `progress` (`progress()`) that fresh seeds or round 1 reached. That
    /// is the corpus's: a fresh seed that reached a new level cannot reach
    /// it again, the corpus can build on it, so it is credited to the
    /// corpus (capped at a signal per child, as any reward), not to fresh
    /// seeds, which would otherwise lead for many rounds on one lucky draw.
    ///
    /// `progressed`: some child of the round (or a rare signal of round 1)
    /// made progress, which opens `PROGRESS_WINDOW` again.
    pub fn learn(&mut self, round: &Yields, progress: u64, progressed: bool) {
        for (i, y) in round.0.iter().enumerate() {
            self.reward[i] = self.reward[i] * DECAY / 1000 + y.reward;
            self.children[i] = self.children[i] * DECAY / 1000 + y.children * 1000;
        }
        self.corpus_credit = self.corpus_credit * DECAY / 1000 + progress;
        let corpus_children: u64 = round.0[1..].iter().map(|y| y.children).sum();
        self.window = if progressed { PROGRESS_WINDOW } else { self.window.saturating_sub(corpus_children) };
    }

    /// Each operator's share of the next round (parts of `SHARE_ONE`,
    /// summing to it); `usable[i]` false gives operator i nothing.
    ///
    /// Two choices, each by rates squared over floors (the module docs):
    /// fresh seeds against the corpus (its operators' rewards and children
    /// pooled, with the progress credited to it), then the corpus's part
    /// among its operators.
    pub fn shares(&self, usable: [bool; 4]) -> [u64; 4] {
        assert!(usable[Operator::Fresh as usize], "a fresh seed is always possible");
        let rate = |reward: u64, prior: u64, children: u64| u128::from(reward + prior) * 1_000_000 / u128::from(children + PRIOR_CHILDREN * 1000);
        let corpus_ops: Vec<usize> = (1..4).filter(|&i| usable[i]).collect();
        // Ties go to the corpus while it makes progress, to fresh seeds
        // otherwise; so does all of a round but the floors.
        let progressing = self.window > 0;
        let (fresh_prior, corpus_prior) = if progressing { (PRIOR_WORTH, PRIOR_WORTH * PRIOR_LEAD) } else { (PRIOR_WORTH * PRIOR_LEAD, PRIOR_WORTH) };
        let fresh_rate = rate(self.reward[0], fresh_prior, self.children[0]);
        let pooled_reward = corpus_ops.iter().map(|&i| self.reward[i]).sum::<u64>() + self.corpus_credit;
        let pooled = rate(pooled_reward, corpus_prior, corpus_ops.iter().map(|&i| self.children[i]).sum());
        let fresh_floor = if progressing { FRESH_MIN } else { FRESH_IDLE };
        let free = SHARE_ONE - fresh_floor - OTHER_MIN * corpus_ops.len() as u64;
        let mut shares = [0u64; 4];
        let corpus_part = if corpus_ops.is_empty() {
            0
        } else {
            let (f, c) = (fresh_rate * fresh_rate, pooled * pooled);
            (u128::from(free) * c / (f + c).max(1)) as u64
        };
        shares[0] = SHARE_ONE - OTHER_MIN * corpus_ops.len() as u64 - corpus_part;
        let scores: Vec<u128> = corpus_ops.iter().map(|&i| rate(self.reward[i], PRIOR_WORTH, self.children[i]).pow(2)).collect();
        let total: u128 = scores.iter().sum();
        for (&i, score) in corpus_ops.iter().zip(&scores) {
            shares[i] = OTHER_MIN + (u128::from(corpus_part) * score / total.max(1)) as u64;
        }
        // Rounding leftovers go to fresh.
        let sum: u64 = shares.iter().sum();
        shares[0] += SHARE_ONE - sum;
        debug_assert!(shares[0] >= FRESH_MIN && corpus_ops.iter().all(|&i| shares[i] >= OTHER_MIN));
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
        // As Go's wasm linker writes them into the name section.
        assert_eq!(code_of("github.com_nats_io_nats_server_v2_server_stree.__node4_.children"), Code::Library);
        assert_eq!(code_of("go.etcd.io_etcd_server_v3_wal.__WAL_.Save"), Code::Library);
        assert_eq!(code_of("golang.org_x_sys_unix.Fsync"), Code::Library);
        assert_eq!(code_of("internal_strconv.FormatInt"), Code::Runtime);
        assert_eq!(code_of("net_http.__conn_.serve"), Code::Runtime);
        assert_eq!(code_of("vendor_golang.org_x_net_http2_hpack.NewEncoder"), Code::Runtime);
        assert_eq!(code_of("go_ast.Walk"), Code::Runtime);
        assert_eq!(code_of("runtime.__mheap_.alloc"), Code::Runtime);
        assert_eq!(code_of("runtime.gcBgMarkWorker.func1"), Code::Runtime);
        assert_eq!(code_of("syscall.fd_write"), Code::Runtime);
        assert_eq!(code_of("type_.eq.main.entry"), Code::Runtime);
        assert_eq!(code_of("main.__store_.put"), Code::Own);
        assert_eq!(code_of("main.main.func2"), Code::Own);
        assert_eq!(code_of("_rt0_wasm_wasip1"), Code::Runtime);
        assert_eq!(code_of("memeqbody"), Code::Runtime);
        assert_eq!(code_of("walkv_store.Put"), Code::Library, "a module named without a domain");
    }

    /// `rounds` rounds in which each operator has one child, worth
    /// `worth(op, round)`.
    fn rounds(bandit: &mut Bandit, rounds: u32, progressed: bool, worth: impl Fn(Operator, u32) -> u64) {
        for round in 0..rounds {
            let mut y = Yields::default();
            for op in Operator::ALL {
                let w = worth(op, round);
                y.of(op).child(usize::from(w > 0), w, false);
            }
            bandit.learn(&y, 0, progressed);
        }
    }

    #[test]
    fn while_the_corpus_makes_progress_the_best_operator_leads() {
        // Branch reaches a new level every child; the rest nothing.
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 10, true, |op, _| if op == Operator::Branch { WORTH_SIGNAL } else { 0 });
        let s = bandit.shares([true; 4]);
        assert_eq!(s.iter().sum::<u64>(), SHARE_ONE);
        assert!(s[0] >= FRESH_MIN && s[0] < FRESH_MIN + SHARE_ONE / 100, "fresh at its floor: {s:?}");
        assert!(s[1] > SHARE_ONE * 3 / 4, "branch leads: {s:?}");
        assert!(s[2] >= OTHER_MIN && s[3] >= OTHER_MIN);
        // The same yields with no progress (say, new crash losses): fresh
        // seeds keep their idle floor.
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 10, false, |op, _| if op == Operator::Branch { WORTH_SIGNAL } else { 0 });
        let s = bandit.shares([true; 4]);
        assert!(s[0] >= FRESH_IDLE && s[0] < FRESH_IDLE + 10, "{s:?}");
        assert!(s[1] > s[2] && s[2] == OTHER_MIN, "branch leads the corpus's part: {s:?}");
    }

    #[test]
    fn with_no_progress_explore_is_mostly_the_sweep() {
        // Nothing tried yet.
        let flat = Bandit::default().shares([true, true, true, false]);
        assert_eq!(flat[3], 0, "an unusable operator gets nothing");
        assert!(flat[0] >= FRESH_IDLE && flat[1] == flat[2], "{flat:?}");
        assert_eq!(Bandit::default().shares([true, false, false, false]), [SHARE_ONE, 0, 0, 0]);
        // Nothing yields, long after a progress: the window closes.
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 1, true, |_, _| 0);
        assert_eq!(bandit.window, PROGRESS_WINDOW, "a window is open");
        rounds(&mut bandit, (PROGRESS_WINDOW / 3) as u32, false, |_, _| 0);
        assert!(bandit.window > 0);
        rounds(&mut bandit, 1, false, |_, _| 0);
        assert_eq!(bandit.window, 0, "and closes after PROGRESS_WINDOW corpus children");
        assert!(bandit.shares([true; 4])[0] >= FRESH_IDLE);
        // Inside a window, with nothing yielding anywhere, the corpus gets
        // the tie (the next stage may take hundreds of children); outside,
        // fresh seeds do.
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 20, true, |_, _| 0);
        let s = bandit.shares([true; 4]);
        assert!(s[0] < SHARE_ONE / 2, "{s:?}");
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 20, false, |_, _| 0);
        let s = bandit.shares([true; 4]);
        assert!(s[0] > SHARE_ONE * 8 / 10, "{s:?}");
        // Fresh seeds reach new code now and then, the corpus nothing.
        let mut bandit = Bandit::default();
        rounds(&mut bandit, 40, true, |op, round| if op == Operator::Fresh && round % 20 == 0 { WORTH_FUNCTION } else { 0 });
        let s = bandit.shares([true; 4]);
        assert!(s[0] > SHARE_ONE * 7 / 10, "fresh seeds lead: {s:?}");
    }

    #[test]
    fn a_fresh_seeds_progress_is_the_corpus_s() {
        // Fresh seeds reached a level (credited to the corpus), the corpus
        // nothing yet: the corpus leads, fresh seeds do not.
        let mut bandit = Bandit::default();
        let mut y = Yields::default();
        y.of(Operator::Fresh).child_learning(1, WORTH_SIGNAL, 0, false);
        bandit.learn(&y, WORTH_SIGNAL, true);
        let s = bandit.shares([true; 4]);
        assert!(s[0] < SHARE_ONE / 5, "{s:?}");
        assert_eq!(y.0[0].worth, WORTH_SIGNAL, "what it reached is still shown as fresh's");
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
