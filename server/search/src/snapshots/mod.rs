//! Snapshots: children of a run continue from a moment of it instead of
//! running its prefix again (docs/snapshots.md).
//!
//! A forked process is the snapshot: every node's memory, globals, tables
//! and suspended fiber, the clock, the event queue, the streams, the disks
//! and the network, as they were between two scheduler steps, shared
//! copy-on-write with every child forked from it. `runner` is that process
//! tree (one thread, as fork needs), `os` the POSIX calls it makes (safe
//! wrappers), `client` the side of the command that asks it for runs,
//! `wire` what they say. `seedfall_sim::snapshot` says why a child's
//! outcome is the same as the same schedule from scratch.
pub mod client;
mod os;
pub mod runner;
pub mod wire;

pub use client::{Report, Snapshots};
pub use wire::Moment;

/// Runs shorter than this (host time) gain nothing from snapshots: taking
/// one and starting a child from it cost about a millisecond each for
/// small guests, up to 15 ms for a Go cluster, and the runner loads the
/// program once more. Explore and cause use them only for longer runs.
pub const WORTH_RUN_NS: u64 = 20_000_000;

/// Starts the runner the first time it is asked for (None: no snapshots).
pub type Starter<'a> = &'a (dyn Fn() -> Option<&'a Snapshots> + Sync);
