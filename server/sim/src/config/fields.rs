//! Every object of `seedfall.json` as a table of its fields: name, JSON
//! shape, bounds, default and meaning. The parser takes each object's list
//! of known fields from here, and `schema` makes the JSON Schema from the
//! same tables, so the two cannot drift apart. A field's order is the order
//! "known fields" lists it in. The texts follow docs/config.md.
use super::disk::{CAPACITY_MIN, SECTOR_BYTES_RANGE, SEED_DIRS_MAX, SEED_FILES_MAX};
use super::faults::{SKEW_MAX_PPM_DEFAULT, SKEW_MAX_PPM_MAX};
use super::nodes::REPLICAS_MAX;
use super::schema::{field, Fallback, Field, Shape, Table};
use super::*;

const fn table(doc: &'static str, fields: &'static [Field]) -> Table {
    Table { doc, fields, exactly_one_of: &[], true_needs: &[] }
}

const PROBABILITY: Shape = Shape::Number { min: 0.0, max: 1.0 };

pub static CONFIG: Table = table(
    "A seedfall run configuration (`seedfall.json`, version 1): the nodes of the cluster and how to build each, how long a run lasts, and the faults it draws. Paths in it are relative to the config file's folder; unknown fields are errors.",
    &[
        field("version", Shape::Version, "The config format version; this seedfall reads 1.").or(Fallback::Uint(CONFIG_VERSION)),
        field("name", Shape::Name, "Names failure folders and corpora. Without it, `seedfall.json` takes its folder's name, `seedfall.fixed.json` becomes `<folder>-fixed` and `other.json` becomes `other`; a name you write is used as written, never rewritten."),
        field("duration", Shape::Duration { positive: true }, "The virtual time a run lasts at most.").required(),
        field("nodes", Shape::Objects { table: &NODE, min: 1, max: NODES_MAX }, "The programs of the cluster; node names are unique.").required(),
        field("limits", Shape::Object(&LIMITS), "Bounds that keep a runaway guest from running forever."),
        field("determinism", Shape::Object(&DETERMINISM), "What determinism promises, and what it costs."),
        field("disk", Shape::Object(&DISK), "The simulated disk: file-system model, sector size, latencies, capacity."),
        field("net", Shape::Object(&NET), "The simulated network's timing."),
        field("faults", Shape::Object(&FAULTS), "Fault rates; every family is off unless configured."),
        field("regressions", Shape::HostPath, "Where pinned regressions live (`seedfall pin`); without it, `regressions/` next to the config."),
    ],
);

pub static LIMITS: Table = table(
    "Bounds that keep a runaway guest from running forever.",
    &[
        field("watchdog_instructions", Shape::Uint { min: WATCHDOG_INSTRUCTIONS_RANGE.0, max: WATCHDOG_INSTRUCTIONS_RANGE.1 }, "A node that runs this many wasm instructions without blocking fails the run. Host work the node causes counts too.")
            .or(Fallback::Uint(WATCHDOG_INSTRUCTIONS_DEFAULT)),
        field("steps_max", Shape::Uint { min: STEPS_MAX_RANGE.0, max: STEPS_MAX_RANGE.1 }, "Scheduler steps per run; exceeding them fails the run (a livelock).").or(Fallback::Uint(STEPS_MAX_DEFAULT)),
        field("memory_mb", Shape::Uint { min: 1, max: MEMORY_MB_MAX }, "Linear memory, in MiB, a node instance may grow to; growth beyond it fails inside the guest (`memory.grow` returns -1), the same way every run.")
            .or(Fallback::Uint(MEMORY_MB_DEFAULT)),
        field("ns_per_instruction", Shape::Uint { min: NS_PER_INSTRUCTION_RANGE.0, max: NS_PER_INSTRUCTION_RANGE.1 }, "Virtual nanoseconds charged per wasm instruction (0 makes computation free).")
            .or(Fallback::Uint(NS_PER_INSTRUCTION_DEFAULT)),
        // No default: unset, a run's share follows -memory-budget and -j
        // (RUN_MEMORY_MB_DEFAULT is only where no command sets it), and
        // writing any number in its place would fix it at every -j.
        field("run_memory_mb", Shape::Uint { min: RUN_MEMORY_MB_RANGE.0, max: RUN_MEMORY_MB_RANGE.1 }, "Host memory, in MiB, one run may hold: every node instance's memory and every simulated disk. Unset, a run gets its share of the process's `-memory-budget` (the budget divided by `-j`); set, it is the same at any `-j`, and `-j` is lowered to fit the budget."),
        field("output_mb", Shape::Uint { min: OUTPUT_MB_RANGE.0, max: OUTPUT_MB_RANGE.1 }, "Output, in MiB, of each node instance's stdout (and apart its stderr) that a run keeps in its trace and failure folder; the rest is hashed and counted, not kept. `-output-cap` overrides it.")
            .or(Fallback::Uint(OUTPUT_MB_DEFAULT)),
    ],
);

pub static DETERMINISM: Table = table(
    "What determinism promises, and what it costs.",
    &[field("canonicalize_nans", Shape::Bool, "Canonicalise NaN bit patterns. Runs are deterministic on one CPU architecture without it; turn it on only to compare float-heavy runs across x86-64 and arm64 (it costs about 3.7x on float code).").or(Fallback::Bool(false))],
);

const RECIPE: &str = "A node takes exactly one of `wasm`, `go` and `cargo`.";

pub static NODE: Table = Table {
    doc: "One program of the cluster: its name, its instances, and exactly one of `wasm` (a prebuilt module), `go` or `cargo` (a build recipe).",
    fields: &[
        field("name", Shape::Name, "The node's name, unique among the nodes; fault `nodes` lists name it.").required(),
        field("replicas", Shape::Uint { min: 1, max: REPLICAS_MAX }, "Instances of this node. Without it, one instance named like the node (`server`); with it, instances `name#1` .. `name#N`, even for `replicas: 1`."),
        field("args", Shape::Strings, "Command-line arguments after the program name.").or(Fallback::Strings(&[])),
        field("env", Shape::Env, "Environment variables. seedfall adds `SEEDFALL_NODE` (the instance's name), and `GOGC=400` to nodes a `go` recipe builds unless `env` sets `GOGC`; `SEEDFALL_NODE` and `ANTITHESIS_SDK_LOCAL_OUTPUT` cannot be set here.")
            .or(Fallback::EmptyMap),
        field("wasm", Shape::HostPath, "The path of a prebuilt wasip1 module. A node takes exactly one of `wasm`, `go` and `cargo`."),
        field("go", Shape::Object(&GO), "Build the node with `go build -trimpath` and `GOOS=wasip1 GOARCH=wasm`. A node takes exactly one of `wasm`, `go` and `cargo`."),
        field("cargo", Shape::Object(&CARGO), "Build the node with `cargo build --target wasm32-wasip1` (or the recipe's `target`). A node takes exactly one of `wasm`, `go` and `cargo`."),
        field("workload", Shape::Bool, "The run ends early once every workload node has exited 0; set `false` for servers that run until the end.").or(Fallback::Bool(true)),
        field("disk", Shape::Object(&NODE_DISK), "This node's own disk: a model and capacity instead of the config's, and the folders and files it holds at t=0."),
    ],
    exactly_one_of: &["wasm", "go", "cargo"],
    true_needs: &[],
};

pub static GO: Table = table(
    RECIPE,
    &[
        field("dir", Shape::HostPath, "The folder `go build` runs in (inside a Go module).").required(),
        field("package", Shape::Text, "The package to build, relative to `dir`.").or(Fallback::Text(".")),
        field("tags", Shape::Strings, "Build tags.").or(Fallback::Strings(&[])),
        field("net", Shape::Bool, "Build with the overlay that puts plain `net.Listen`, `net.Dial` and `net/http` on the simulated network.").or(Fallback::Bool(false)),
        field("storage", Shape::Bool, "Build with the storage overlay: mmap, flock, `x/sys/unix` and the patches bbolt, badger, pebble, etcd's WAL and raft-boltdb need on wasip1.").or(Fallback::Bool(false)),
        field("linux_errors", Shape::Bool, "Linux's error texts for `syscall`'s errnos (`\"no space left on device\"`, not wasip1's `\"No space left on device\"`), for programs that match them.").or(Fallback::Bool(true)),
        field("precomputed_tables", Shape::Bool, "Tables Go computes at every start (ed25519's base-point table) built in as static data, computed at build time by the toolchain's own code.").or(Fallback::Bool(true)),
    ],
);

pub static CARGO: Table = table(
    RECIPE,
    &[
        field("dir", Shape::HostPath, "The folder `cargo build` runs in.").required(),
        field("package", Shape::Text, "The package to build (`-p`)."),
        field("bin", Shape::Text, "The binary to build (`--bin`), needed when the package has several."),
        field("profile", Shape::Text, "The cargo profile.").or(Fallback::Text("release")),
        field("target", Shape::Choice(RUST_TARGETS), "The Rust target to build for; a program that starts threads (`std::thread`, rayon, crossbeam) needs `wasm32-wasip1-threads` (docs/sdk-rust.md#threads).").or(Fallback::Text("wasm32-wasip1")),
    ],
);

/// `crate::config::RustTarget::ALL`, with what each gives the program.
const RUST_TARGETS: &[(&str, &str)] = &[
    ("wasm32-wasip1", "No threads: `std::thread::spawn` fails."),
    ("wasm32-wasip1-threads", "Threads (wasi-threads): each runs as a fiber of its node, switched deterministically."),
];

/// `crate::disk::FsModel::ALL`, with what each model keeps.
const MODELS: &[(&str, &str)] = &[
    ("ext4", "An ordered journal committed by any fsync."),
    ("xfs", "An ordered log committed by any fsync; lengths move with written data."),
    ("btrfs", "An fsync makes that file durable; nothing tears."),
    ("posix", "Only what POSIX promises; anything else may survive or not."),
];

pub static DISK: Table = table(
    "The simulated disk: file-system model, sector size, latencies, capacity.",
    &[
        field("model", Shape::Choice(MODELS), "When names, lengths and data become durable; a node's own `disk.model` overrides it.").or(Fallback::Text("ext4")),
        field("commit_interval", Shape::Duration { positive: false }, "The journal (`ext4`, `xfs`) or transaction (`btrfs`) also commits this often; unset, 5 s on ext4 and 30 s on xfs and btrfs, and `\"0s\"` commits only at fsync."),
        field("sector_bytes", Shape::PowerOfTwo { min: SECTOR_BYTES_RANGE.0, max: SECTOR_BYTES_RANGE.1 }, "Torn writes keep or lose whole sectors of this size.").or(Fallback::Uint(512)),
        field("io_latency", Shape::Duration { positive: false }, "Mean virtual time of a read or write; each draws from half to one and a half times it.").or(Fallback::Text("20us")),
        field("fsync_latency", Shape::Duration { positive: false }, "Mean virtual time an fsync keeps the node waiting.").or(Fallback::Text("1ms")),
        field("capacity", Shape::Size { min: CAPACITY_MIN, max: crate::disk::DISK_BYTES_MAX }, "What each node's files and folders may hold (unset: 2 GiB). A write that would pass it writes what fits, and the next one fails with ENOSPC; a truncate up, a create or a mkdir past it fails with ENOSPC."),
    ],
);

pub static NODE_DISK: Table = table(
    "This node's own disk.",
    &[
        field("model", Shape::Choice(MODELS), "This node's model, instead of `disk.model`."),
        field("capacity", Shape::Size { min: CAPACITY_MIN, max: crate::disk::DISK_BYTES_MAX }, "This node's capacity, instead of `disk.capacity`. Seeded folders and files must fit in it, or every run fails saying so."),
        field("dirs", Shape::GuestPaths { max: SEED_DIRS_MAX }, "Folders that exist, durably, at t=0, parents included: `[\"/data\", \"/var/lib/app\"]`."),
        field("files", Shape::Files { max: SEED_FILES_MAX }, "Files copied in from the host at t=0, durably: guest path to a host path relative to the config's folder, like `{\"/etc/app.conf\": \"conf/app.conf\"}` (at most 256 MiB per node). A seeded file cannot stand where `dirs` or another file needs a folder."),
    ],
);

pub static NET: Table = table(
    "The simulated network's timing.",
    &[
        field("latency", Shape::Span, "One-way latency of a segment between two hosts, drawn per segment.").or(Fallback::Text("100us-2ms")),
        field(
            "distribution",
            Shape::Choice(&[("uniform", "Uniform over the `latency` range."), ("long_tail", "One segment in 16 takes 1 to 10 times the range's maximum.")]),
            "How a segment's latency is drawn.",
        )
        .or(Fallback::Text("uniform")),
        field("connect_timeout", Shape::Duration { positive: true }, "A connect with no answer by then fails with ETIMEDOUT.").or(Fallback::Text("3s")),
    ],
);

pub static FAULTS: Table = Table {
    doc: "Fault rates; every family is off unless configured.",
    fields: &[
        field("swarm", Shape::Bool, "Each seed switches a random half of the configured families on.").or(Fallback::Bool(false)),
        field("after_setup", Shape::Bool, "No fault at all before a workload reports setup complete (as Antithesis does): time-based faults are drawn from that moment, fsync errors and storage faults only after it.").or(Fallback::Bool(false)),
        field("crash", Shape::Object(&CRASH), "Crashes: a power loss, or (`kill`) a process kill whose machine keeps every write in its page cache."),
        field("fsync_eio", Shape::Object(&FSYNC_EIO), "fsync fails with EIO, fsyncgate style."),
        field("torn_writes", Shape::Bool, "Crashes tear unsynced writes at sector granularity. It shapes the crashes `crash` draws, so `true` needs `crash`.").or(Fallback::Bool(false)),
        field("pause", Shape::Object(&PAUSE), "The node makes no progress for a while."),
        field("clock_skew", Shape::Object(&CLOCK_SKEW), "The node's clocks run fast or slow for a while."),
        field("clock_jump", Shape::Object(&CLOCK_JUMP), "The node's realtime clock steps forward or back."),
        field("partition", Shape::Object(&PARTITION), "The instance is cut off from every other one for a while."),
        field("corrupt_read", Shape::Object(&MEDIA_READ), "A read returns one flipped bit."),
        field("latent_sector_error", Shape::Object(&MEDIA_READ), "One sector of a read fails with EIO until it is rewritten."),
        field("misdirected_write", Shape::Object(&MEDIA_WRITE), "A write lands on another sector of its file when it is written out."),
        field("lost_write", Shape::Object(&MEDIA_WRITE), "A write is acknowledged and never persisted."),
        field("write_error", Shape::Object(&WRITE_ERROR), "A `write` or `pwrite` fails with EIO or ENOSPC before anything is written."),
        field("disk_full", Shape::Object(&DISK_FULL), "The node's disk has no free space for a while: growing writes, creates and mkdirs fail with ENOSPC."),
    ],
    exactly_one_of: &[],
    true_needs: &[("torn_writes", "crash")],
};

const RATE: Field = field("rate", Shape::Number { min: 0.0, max: 1000.0 }, "Expected faults per virtual second per targeted node instance.").required();
const NODES: Field = field("nodes", Shape::Strings, "The config nodes this family targets (all their replicas); every node when absent.");
const FAMILY: &str = "A fault family: `nodes` lists config node names (all their replicas), every node when absent.";

pub static CRASH: Table = table(
    FAMILY,
    &[
        RATE,
        field("restart_after", Shape::Span, "How long a crashed node stays down; absent, it never restarts."),
        field("during_disk_op", PROBABILITY, "Odds that a crash lands inside the node's next disk operation.").or(Fallback::Number(0.0)),
        field("kill", PROBABILITY, "Odds that a crash is a process kill (`kill -9`: the machine stays up and keeps every write in its page cache) rather than a power loss.").or(Fallback::Number(0.0)),
        NODES,
    ],
);

pub static FSYNC_EIO: Table = table(FAMILY, &[field("probability", PROBABILITY, "Odds that one fsync fails.").required(), NODES]);

pub static PAUSE: Table = table(FAMILY, &[RATE, field("duration", Shape::Span, "How long a pause lasts, like `\"10ms-200ms\"`.").required(), NODES]);

pub static CLOCK_SKEW: Table = table(
    FAMILY,
    &[
        RATE,
        field("duration", Shape::Span, "How long the clocks run off, like `\"10ms-200ms\"`.").required(),
        field("max_ppm", Shape::Uint { min: 1, max: SKEW_MAX_PPM_MAX }, "The largest drift, in parts per million (100000: clocks 10% fast or slow).").or(Fallback::Uint(SKEW_MAX_PPM_DEFAULT)),
        NODES,
    ],
);

pub static CLOCK_JUMP: Table = table(FAMILY, &[RATE, field("max", Shape::Duration { positive: false }, "The largest jump of the realtime clock, forward or back, like `\"10s\"`.").required(), NODES]);

pub static PARTITION: Table = table(
    FAMILY,
    &[
        RATE,
        field("duration", Shape::Span, "How long a partition lasts, like `\"100ms-2s\"`.").required(),
        field("one_way", PROBABILITY, "Odds that a partition cuts one direction only.").or(Fallback::Number(0.0)),
        NODES,
    ],
);

const ATLAS: Field = field("atlas", Shape::Bool, "A fault atlas: for each stretch of each file, one replica of a replicated node is never hit, so a correct replicated system can always recover the data from it.").or(Fallback::Bool(false));

pub static MEDIA_READ: Table = table(FAMILY, &[field("probability", PROBABILITY, "Odds that one read is hit.").required(), NODES, ATLAS]);

pub static MEDIA_WRITE: Table = table(FAMILY, &[field("probability", PROBABILITY, "Odds that one write is hit.").required(), NODES, ATLAS]);

pub static WRITE_ERROR: Table = table(
    FAMILY,
    &[
        field("probability", PROBABILITY, "Odds that one write fails.").required(),
        NODES,
        field("path_prefix", Shape::PathPrefix, "Only writes to files whose path starts with this fail; every file when absent."),
        field("errors", Shape::Choices(&[("EIO", "An I/O error."), ("ENOSPC", "No space left on the device.")]), "The errors a failing write returns, drawn among these.").or(Fallback::Strings(&["EIO", "ENOSPC"])),
    ],
);

pub static DISK_FULL: Table = table(FAMILY, &[RATE, field("duration", Shape::Span, "How long the disk stays full, like `\"10ms-1s\"`.").required(), NODES]);
