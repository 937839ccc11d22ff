//! seedfall-sim: ONE deterministic run of a wasip1 cluster.
//!
//! A run is a pure function: `run(program, schedule, options) -> Outcome`.
//! The program is the parsed config plus the compiled guest modules; the
//! schedule names the seed (and, in later sections, faults and branches).
//!
//! Architecture invariants (tested in `tests/` and by the tidy test):
//! - no threads, no wall clock reaches a guest, no OS randomness, no host
//!   filesystem or sockets: the only inputs are the program and the schedule;
//! - all randomness comes from the named ChaCha streams in [`streams`];
//! - no `HashMap` iteration order leaks into behaviour (ordered maps only);
//! - every queue, buffer and loop has a named bound.
//!
//! Wall-clock readings exist only in [`outcome::Stats`] (how long the run
//! took on this machine) and never feed back into the simulation.

pub mod abi;
pub mod clockmodel;
pub mod config;
pub mod coverage;
pub mod disk;
pub mod engine;
pub mod events;
pub mod failure;
pub mod guest_profile;
pub mod faults;
pub mod files;
pub mod locks;
pub mod memory;
pub mod net;
pub mod node;
pub mod outcome;
pub mod program;
pub mod props;
pub mod run;
pub mod schedule;
pub mod scheduler;
pub mod snapshot;
pub mod storage;
pub mod streams;
pub mod teach;
pub mod trace;
pub mod vtime;
pub mod wasi;
pub mod world;

pub use config::{Config, ConfigError};
pub use engine::{Engine, EngineOptions};
pub use outcome::{Outcome, Stats, Verdict, Watermark};
pub use program::Program;
pub use run::{run, run_paused, RunOptions};
pub use schedule::{check_fits, Branch, Fault, Schedule, ScheduleFile};
pub use vtime::VTime;
