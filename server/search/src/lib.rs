//! seedfall-search: MANY runs.
//!
//! Turns a config into a runnable [`seedfall_sim::Program`] (building guests
//! from their recipes and caching compiled modules on disk), and runs seeds
//! on worker threads with results merged in seed order, so nothing a user
//! sees depends on `-j`.
//!
//! Architecture invariants: this crate owns all parallelism (`pool`) and all
//! host I/O of the engine (builds, caches); `seedfall-sim` below it has none.
pub mod artifacts;
pub mod cache;
pub mod catalog;
pub mod explore;
pub mod go_overlay;
pub mod cause;
pub mod discover;
pub mod durability;
pub mod finding;
pub mod findings_file;
pub mod kept;
pub mod merge;
pub mod modules;
pub mod paths;
pub mod mutate;
pub mod pool;
pub mod project;
pub mod pins;
pub mod properties;
pub mod recipe;
pub mod seeds;
pub mod session;
pub mod shard;
pub mod shard_result;
pub mod shrink;
pub mod snapshots;
pub mod sweep;
pub mod sweep_result;
pub mod target;
pub mod toolchain;

pub use project::{load, load_options, load_with, LoadError, LoadOptions, Project};
pub use seeds::SeedRange;
pub use sweep::{sweep, SweepOptions, SweepSummary};
