//! Function coverage: rewrite a guest module so that the first entry into
//! any function is logged, in order, in a memory the host reads.
//!
//! The rewrite appends one linear memory (exported as `COVERAGE_EXPORT`, a
//! name a guest cannot clash with by accident; its layout is [`Layout`]) and
//! puts at the start of every function body a probe (see [`functions::probe`]): if the
//! function's byte in the bitmap is still 0, set it and append the function
//! index to the log. The host reads the log's new entries at every host call
//! (`node::harvest_coverage`), so it knows when, in virtual time and steps, a
//! function was first entered, to the nearest host call: exploration can
//! branch just after it.
//!
//! Virtual time is charged from fuel, so a probe must not change how much
//! fuel the program burns. The path taken on every entry after the first
//! costs 3 fuel (`i32.const`, `i32.load8_u`, `br_if`; `block` and `end` are
//! free), exactly as the earlier probe (`i32.const`, `i32.const`,
//! `i32.store8`) did; the first entry's extra `FIRST_ENTRY_FUEL` is given
//! back at the host call that reads its log entry. Traces are the same as
//! with the earlier probe unless a fuel quantum ends within the first-entry
//! fuel burnt since the last host call (15 per new function): then a run
//! gains a scheduler step, and the quantum's full charge can put virtual
//! time ahead until the next host call.
//!
//! Adding a memory shifts no index; adding a function import would shift
//! every one, so we do not. `.debug_*` sections are dropped (their offsets
//! would be wrong); the `name` section is kept. Go switches goroutines by
//! unwinding and rewinding the wasm stack, so a probe may run again on
//! resume: it finds its byte set and does nothing.
//!
//! [`Mode::Edges`] adds AFL-style edge probes on top (see [`edges`]); they
//! cost fuel on every execution, so they change virtual timing.
//!
//! By role, each shared by both probe kinds: [`encode`] (LEB128, memory
//! arguments, section order), [`functions`] and [`edges`] (each kind's probe
//! and its costs), [`rewrite`] (the module and every body rewritten),
//! [`read`] (the host's readers of the log and the map). This file holds
//! the mode and the coverage memory's layout.
pub(crate) mod edges;
mod encode;
mod functions;
mod read;
mod rewrite;
#[cfg(test)]
mod tests;

pub use functions::{probe, FIRST_ENTRY_FUEL};
pub use read::{bucket, edge_map, log_count, log_since, EdgeEntry, EdgesReached, FirstEntry, Reached};
pub use rewrite::{function_names, instrument, instrument_with, memory_starts, Instrumented};

pub const COVERAGE_EXPORT: &str = "__seedfall_coverage";

/// What a module is instrumented for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Function first entries only: timing-neutral (first-entry fuel is
    /// given back), the default.
    #[default]
    Functions,
    /// Function first entries plus AFL-style edge hit counts
    /// ([`edges`]): an exploration aid that changes virtual timing.
    Edges,
}

/// Where things live in the coverage memory: a u32 count of log entries at
/// 0, the log (one u32 function index per first entry, in entry order) at
/// 4, one byte per function index after it, and with `edges` the
/// `edges::MAP_BYTES` hit-count map after that.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    pub functions: u32,
    /// The module has edge probes (`Mode::Edges`) and the map at `edges_at`.
    pub edges: bool,
}

impl Layout {
    pub const COUNT_AT: u32 = 0;
    pub const LOG_AT: u32 = 4;

    pub fn bitmap_at(&self) -> u32 {
        Self::LOG_AT + 4 * self.functions
    }

    /// The edge hit-count map (meaningful only with `edges`).
    pub fn edges_at(&self) -> u32 {
        self.bitmap_at() + self.functions
    }

    pub fn bytes(&self) -> u64 {
        u64::from(self.edges_at()) + if self.edges { u64::from(edges::MAP_BYTES) } else { 0 }
    }
}
