//! `seedfall merge FILE...`: shard results (`-shard i/n -json FILE`) made
//! one answer. A sweep's merge prints what the unsharded run prints, writes
//! what it writes (the failures index, last-run, the folders of the
//! shortest runs only) and exits as it exits. The merging itself is
//! `seedfall_search::merge`; this prints it. docs/scale-out.md.
use crate::sweep_report;
use clap::Args;
use seedfall_search::shard_result::Read;
use seedfall_search::sweep_result::SweepResult;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct MergeArgs {
    /// Shard results: every shard of one piece of work, once each.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Print one JSON document instead of text; with `-json=FILE`, write it
    /// there (atomically) and print the text as well. (The `=` is required
    /// here: a file after a bare -json is a shard result.)
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "", require_equals = true)]
    pub json: Option<String>,
    /// Also write the results as JUnit XML.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the sweep's triage report (HTML, or Markdown for .md): the
    /// config must be here; each finding's shortest run is replayed for it.
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Exit 1 when a pinned regression still fails (for CI).
    #[arg(long)]
    pub fail_on_pinned: bool,
    /// explore: the corpus folder every shard's entries are gathered into
    /// (default .seedfall/corpus/<config>/ next to the config).
    #[arg(long)]
    pub corpus: Option<PathBuf>,
}

pub fn main(a: MergeArgs) -> i32 {
    let result = seedfall_search::merge::read_all(&a.files).and_then(|mut reads| match reads[0].block.identity.command.as_str() {
        "run" => merge_run(&a, &mut reads),
        "explore" if a.report.is_some() => Err("-report: merges of sweep shards (seedfall run -shard) only; an exploration's merge gives its findings with -json and -junit".into()),
        "explore" => crate::merge_explore::merge(&reads, a.json.as_deref(), a.junit.as_deref(), a.corpus.as_deref()),
        "mutate" if a.report.is_some() || a.junit.is_some() => Err("-report and -junit: a mutation run has neither; its merge prints the mutation table (-json for the document)".into()),
        "mutate" => crate::merge_mutate::merge(&reads, a.json.as_deref()),
        other => Err(format!("{}: shards of `{other}`, which this seedfall cannot merge", reads[0].file)),
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("seedfall merge: {e}");
            2
        }
    }
}

fn merge_run(a: &MergeArgs, reads: &mut [Read]) -> Result<i32, String> {
    let report = seedfall_search::merge::sweep::merge(reads)?;
    let first = &reads[0];
    let text = a.json.as_deref() != Some("");
    let mut code = report.exit_code(a.fail_on_pinned);
    if let Some(path) = &a.report {
        match write_report(path, &report, first) {
            Ok(()) => eprintln!("seedfall: report written to {}", crate::output::relative(path)),
            Err(e) => {
                eprintln!("seedfall merge: -report: {e}");
                code = 2;
            }
        }
    }
    if !sweep_report::write_outputs(&report, a.json.as_deref(), None, a.junit.as_deref(), a.fail_on_pinned) {
        code = 2;
    }
    if text {
        print!("{}", sweep_report::pins_text(&report));
        for s in &report.pins.skipped {
            eprintln!("seedfall: skipped a pin: {}", crate::output::relative_prefix(s));
        }
        print!("{}", sweep_report::header_line(&report));
        for w in &report.catalog_warnings {
            eprintln!("seedfall: warning: {}", crate::output::relative_prefix(w));
        }
        print!("{}", sweep_report::results_text(&report, a.fail_on_pinned));
    }
    Ok(code)
}

/// The unsharded run's triage report. It needs each finding's shortest
/// run with its trace, which no shard result holds: that run is replayed
/// here (it is a pure function of the program and its seed), on the
/// program the shards ran, checked by its digest.
fn write_report(path: &Path, report: &SweepResult, first: &Read) -> Result<(), String> {
    let identity = &first.block.identity;
    if !identity.options.contains(" from=- ") || !identity.options.contains(" faults=- ") {
        return Err("the shards ran with -from or -faults; a report of those is not merged (give -report to a run of the same flags)".into());
    }
    let (project, _) = crate::load::project_for(Path::new(&report.config), true, &crate::resources::Resources::default(), 1).map_err(|_| format!("cannot load {}", report.config))?;
    if project.digest != identity.program {
        return Err(format!("{} here is not the program the shards ran (its config, modules or seeded disks differ)", report.config));
    }
    let mut shortest = std::collections::BTreeMap::new();
    for f in report.found.ordered() {
        // The finding's shortest run, as the terminal shows it.
        let seed = f.shortest[0].seed;
        let options = seedfall_sim::RunOptions::default();
        let mut o = seedfall_sim::run(&project.program, &seedfall_sim::Schedule::seed(seed), &options);
        seedfall_search::durability::check(&project.program, &mut o, &options);
        if o.failure.as_ref().map(|x| seedfall_search::finding::Signature::of(x).id()) != Some(f.id.clone()) {
            return Err(format!("seed {seed} did not fail the same way when replayed here"));
        }
        let folder = seedfall_search::kept::folder(&project.program.config, seed, &f.signature);
        shortest.insert(f.id.clone(), crate::report::Shortest { outcome: o, folder: folder.is_dir().then_some(folder) });
    }
    let input = crate::report::Input { project: &project, seeds: report.seeds.clone(), summary: &report.summary, found: &report.found, shortest: &shortest, table: &report.table, exploration: None };
    crate::report::write(path, &input)
}
