//! seedfall-sim: ONE deterministic run of a wasip1 cluster.
//!
//! A run is a pure function: `run(program, schedule, options) -> Outcome`.
//! The program is the parsed config plus the compiled guest modules; the
//! schedule names the seed (and, in later sections, faults and branches).
//!
//! Architecture invariants:
//! - a run starts no thread, reads no wall clock into the simulation, draws
//!   no OS randomness and touches no host file or socket: its only inputs
//!   are the program and the schedule (the config and seeded files are read
//!   from the host before, when the program is built: [`files`]; the
//!   engine reads the kernel's version once, to choose how pool slots are
//!   reset, which changes host cost only);
//! - all randomness comes from the named ChaCha streams in [`streams`];
//! - no `HashMap` iteration order leaks into behaviour (ordered maps only);
//! - every queue, buffer and loop has a named bound.
//!
//! The first three are checked on this crate's source by
//! `server/cli/tests/tidy.rs` (which files may read the wall clock or the
//! host's files, and why), and in behaviour by the determinism tests (every
//! example replays to the same trace hash across runs, processes and `-j`).
//! The last is kept by review and `docs/limits.md`, whose bounds
//! `server/cli/src/limits_doc.rs` reads from the code.
//!
//! Wall-clock readings exist only in [`outcome::Stats`] (how long the run
//! took on this machine) and never feed back into the simulation.

mod abi;
mod antithesis;
mod clockmodel;
pub mod config;
pub mod coverage;
pub mod disk;
mod engine;
mod events;
pub mod failure;
pub mod guest_profile;
mod errno;
mod faults;
pub mod files;
pub mod hash;
pub mod limits;
mod locks;
pub mod memory;
pub mod moment;
pub mod net;
mod node;
pub mod outcome;
mod program;
pub mod props;
pub mod run;
pub mod schedule;
mod scheduler;
pub mod snapshot;
pub mod streams;
mod teach;
pub mod threads;
pub mod trace;
mod traps;
pub mod vtime;
mod wasi;
mod world;

pub use config::{Config, ConfigError};
pub use engine::{Engine, EngineOptions};
pub use outcome::{Outcome, Stats, Verdict};
pub use props::Watermark;
pub use program::Program;
pub use run::{run, run_paused, RunOptions};
pub use scheduler::FUEL_QUANTUM;
pub use schedule::{check_fits, Branch, Fault, Schedule, ScheduleFile};
pub use vtime::VTime;
pub use world::World;
