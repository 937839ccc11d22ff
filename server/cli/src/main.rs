//! `seedfall`: the command line. Glue only: argument parsing, output, exit
//! codes. The engine lives in `seedfall-sim` and `seedfall-search`.
//!
//! Exit codes: 0 every run passed; 1 a run failed; 2 usage, config or build error.
mod args;
mod cause;
mod crash_states;
mod doctor;
mod explore;
mod init;
mod inspect;
mod junit;
mod kube;
mod launch;
#[cfg(test)]
mod limits_doc;
mod load;
mod merge;
mod merge_explore;
mod merge_mutate;
mod moment;
mod mutate;
mod pin;
mod guest_profile;
mod profile;
mod output;
mod replay;
mod resources;
mod report;
mod run;
mod schedule;
mod schema;
mod sharded;
mod shrink;
mod slurm;
mod snapshots;
mod sweep_report;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "seedfall", version, about = "Deterministic simulation testing for wasip1 services", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a range of seeds; print each failure and a summary.
    Run(run::RunArgs),
    /// Run one seed again and print everything every node wrote.
    Replay(replay::ReplayArgs),
    /// Feedback-guided search: keep runs that reach something new, go deeper.
    Explore(explore::ExploreArgs),
    /// Rerun a sweep with durability weakened, to see if your checks notice.
    Mutate(mutate::MutateArgs),
    /// Merge shard results (-shard i/n -json FILE) into the one answer.
    Merge(merge::MergeArgs),
    /// Run a command's shards as a Slurm job array, then merge them.
    Slurm(slurm::SlurmArgs),
    /// Kubernetes manifests: an Indexed Job of shards and a merge Job.
    Kube(kube::KubeArgs),
    /// Reduce a failing schedule to the faults that matter.
    Shrink(shrink::ShrinkArgs),
    /// The timeline of one run, filterable by node and event kind.
    Inspect(inspect::InspectArgs),
    /// Every tree a power loss could leave on each disk during one run.
    #[command(name = "crash-states")]
    CrashStates(crash_states::CrashStatesArgs),
    /// Turn a failure into a regression that every later run replays first.
    Pin(pin::PinArgs),
    /// Which faults does the failure need, and when did it become certain after them?
    Cause(cause::CauseArgs),
    /// Write a first seedfall.json for the Go module or cargo package here.
    Init(init::InitArgs),
    /// Is this machine, and this config, ready to run? Each problem with its fix.
    Doctor(doctor::DoctorArgs),
    /// The JSON Schema of seedfall.json, for editors: completion, hover, validation.
    ///
    /// Prints the schema (JSON Schema draft-07) of the config file, made from
    /// the same tables the config parser reads fields with. Any editor that
    /// reads JSON Schema can use it for completion, hover docs and validation
    /// of seedfall*.json files: the VS Code extension contributes it itself;
    /// elsewhere, write it with -o FILE and map seedfall*.json to that file
    /// in the editor's JSON settings (docs/config.md#editor-support-the-json-schema).
    Schema(schema::SchemaArgs),
    /// The editor daemon: LSP over stdio (diagnostics, lenses, background runs).
    Lsp(LspArgs),
    /// An MCP server over stdio: seedfall's tools for AI agents.
    Mcp,
    /// The process a command starts to fork snapshots in (internal).
    #[command(name = "snapshot-runner", hide = true)]
    SnapshotRunner(snapshots::RunnerArgs),
}

/// What LSP clients put on the daemon's command line. stdio is the only
/// transport; `--stdio` (which vscode-languageclient and most clients pass)
/// says so, and the client's process id is accepted and not needed.
#[derive(clap::Args)]
struct LspArgs {
    /// Speak LSP on stdin/stdout (the default, and the only transport).
    #[arg(long)]
    stdio: bool,
    /// The editor's process id (accepted for compatibility; unused).
    #[arg(long = "clientProcessId", value_name = "PID")]
    client_process_id: Option<u32>,
}

fn main() {
    // wasmtime errors capture a native backtrace when RUST_BACKTRACE is set,
    // which slows every failing run; seedfall's own panics still print one.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
    // `seedfall run | head` ends quietly when the reader goes away, like any
    // Unix filter, instead of panicking on a broken pipe.
    // SAFETY: called before any thread starts; restores the default action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = match Cli::try_parse_from(args::normalize(std::env::args_os())) {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            std::process::exit(code);
        }
    };
    let code = match cli.command {
        Command::Run(a) => run::main(a),
        Command::Replay(a) => replay::main(a),
        Command::Explore(a) => explore::main(a),
        Command::Mutate(a) => mutate::main(a),
        Command::Merge(a) => merge::main(a),
        Command::Slurm(a) => slurm::main(a),
        Command::Kube(a) => kube::main(a),
        Command::Shrink(a) => shrink::main(a),
        Command::Inspect(a) => inspect::main(a),
        Command::CrashStates(a) => crash_states::main(a),
        Command::Pin(a) => pin::main(a),
        Command::Cause(a) => cause::main(a),
        Command::Init(a) => init::main(a),
        Command::Doctor(a) => doctor::main(a),
        Command::Schema(a) => schema::main(a),
        Command::Lsp(_) => seedfall_lsp::serve_stdio(),
        Command::Mcp => seedfall_lsp::mcp::serve_stdio(),
        Command::SnapshotRunner(a) => snapshots::runner_main(a),
    };
    std::process::exit(code);
}
