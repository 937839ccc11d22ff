//! Durability labels: on which file systems does a failure hold?
//!
//! Every failure is found under some file-system model (`ext4` by default,
//! or what the config says). It is run again, with exactly the faults it
//! had, with every disk under each other model (`ext4`, `xfs`, `btrfs`,
//! `posix`), and labelled by where it holds: "holds on ext4, xfs and
//! btrfs", "holds on ext4; not on xfs or btrfs", "only under strict POSIX
//! (portable durability): not on ext4, xfs or btrfs". The three real models
//! are checked against the real kernel (docs/disk.md); a failure that holds
//! under none of them is one no real file system we model produces. A run
//! without a crash never reads what a disk kept, so the model cannot matter
//! and nothing is re-run.
use seedfall_sim::disk::FsModel;
use seedfall_sim::outcome::{ModelCheck, ModelVerdict};
use seedfall_sim::{run, Fault, Outcome, Program, RunOptions, Verdict};

/// The models of real file systems, in the order labels name them.
pub const REAL: [FsModel; 3] = [FsModel::Ext4, FsModel::Xfs, FsModel::Btrfs];

/// Which model the run used: one name, or `ext4+posix` for a mix.
pub fn found_under(models: &[FsModel]) -> (String, Option<FsModel>) {
    let mut distinct: Vec<FsModel> = models.to_vec();
    distinct.sort_by_key(|m| FsModel::ALL.iter().position(|x| x == m));
    distinct.dedup();
    match distinct.as_slice() {
        [] => (FsModel::default().name().into(), Some(FsModel::default())),
        [one] => (one.name().into(), Some(*one)),
        many => (many.iter().map(|m| m.name()).collect::<Vec<_>>().join("+"), None),
    }
}

/// "a", "a and b", "a, b and c" (`or` for negations).
fn list(names: &[&str], last: &str) -> String {
    match names {
        [] => String::new(),
        [one] => one.to_string(),
        [init @ .., tail] => format!("{} {last} {tail}", init.join(", ")),
    }
}

/// The label of a failure that crashed, from each model's verdict.
pub fn label(verdicts: &[ModelVerdict]) -> String {
    let fails = |m: FsModel| verdicts.iter().any(|v| v.model == m.name() && v.fails);
    let holds: Vec<&str> = REAL.iter().filter(|m| fails(**m)).map(|m| m.name()).collect();
    let not: Vec<&str> = REAL.iter().filter(|m| !fails(**m)).map(|m| m.name()).collect();
    let mut label = match (holds.is_empty(), not.is_empty()) {
        (false, true) => format!("holds on {}", list(&holds, "and")),
        (false, false) => format!("holds on {}; not on {}", list(&holds, "and"), list(&not, "or")),
        (true, _) if fails(FsModel::Posix) => format!("only under strict POSIX (portable durability): not on {}", list(&not, "or")),
        (true, _) => "holds under none of the models when re-run (the run itself mixes models)".into(),
    };
    let differently: Vec<String> = verdicts.iter().filter_map(|v| v.differently.as_ref().map(|d| format!("on {}: {d}", v.model))).collect();
    if !differently.is_empty() {
        label.push_str(&format!(" (differently {})", differently.join("; ")));
    }
    label
}

fn same_failure(a: &Outcome, b: &Outcome) -> bool {
    match (&a.failure, &b.failure) {
        // The same finding: another model may fail with other numbers.
        (Some(x), Some(y)) => crate::finding::Signature::of(x) == crate::finding::Signature::of(y),
        _ => false,
    }
}

/// Re-checks a failing outcome under every other model (one run each,
/// unless no crash happened) and stores the label in it.
pub fn check(program: &Program, outcome: &mut Outcome, options: &RunOptions) {
    if outcome.verdict != Verdict::Fail || outcome.model_check.is_some() {
        return;
    }
    // A bound the run hit (memory, steps, the watchdog) is not about what
    // the disk kept.
    let kind = outcome.failure.as_ref().map(|f| f.kind);
    if matches!(kind, Some(seedfall_sim::failure::FailureKind::Limit | seedfall_sim::failure::FailureKind::Watchdog)) {
        return;
    }
    let (found, found_model) = found_under(&outcome.disk_models);
    let crashed = outcome.schedule.faults.iter().flatten().any(|f| matches!(f, Fault::Crash { .. }));
    if !crashed {
        let label = "fails under any file-system model (no crash before it)".into();
        outcome.model_check = Some(ModelCheck { found_under: found, models: Vec::new(), label });
        return;
    }
    let models: Vec<ModelVerdict> = FsModel::ALL
        .iter()
        .map(|&m| {
            if Some(m) == found_model {
                return ModelVerdict { model: m.name().into(), fails: true, differently: None };
            }
            let again = run(program, &outcome.schedule, &RunOptions { model: Some(m), disk_trees: false, crash_states: false, guest_profile: None, ..options.clone() });
            let differently = again.failure.as_ref().filter(|_| !same_failure(outcome, &again)).map(|f| format!("{}: {}", f.node, f.message));
            ModelVerdict { model: m.name().into(), fails: again.verdict == Verdict::Fail, differently }
        })
        .collect();
    let label = label(&models);
    outcome.model_check = Some(ModelCheck { found_under: found, models, label });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(model: FsModel, fails: bool) -> ModelVerdict {
        ModelVerdict { model: model.name().into(), fails, differently: None }
    }

    #[test]
    fn labels_say_where_a_failure_holds() {
        assert_eq!(found_under(&[FsModel::Ext4, FsModel::Ext4]), ("ext4".into(), Some(FsModel::Ext4)));
        assert_eq!(found_under(&[FsModel::Posix, FsModel::Ext4]), ("ext4+posix".into(), None));
        let all = [v(FsModel::Ext4, true), v(FsModel::Xfs, true), v(FsModel::Btrfs, true), v(FsModel::Posix, true)];
        assert_eq!(label(&all), "holds on ext4, xfs and btrfs");
        let some = [v(FsModel::Ext4, true), v(FsModel::Xfs, false), v(FsModel::Btrfs, false), v(FsModel::Posix, true)];
        assert_eq!(label(&some), "holds on ext4; not on xfs or btrfs");
        let posix = [v(FsModel::Ext4, false), v(FsModel::Xfs, false), v(FsModel::Btrfs, false), v(FsModel::Posix, true)];
        assert_eq!(label(&posix), "only under strict POSIX (portable durability): not on ext4, xfs or btrfs");
        let mut odd = some.clone();
        odd[1] = ModelVerdict { model: "xfs".into(), fails: true, differently: Some("db: lost".into()) };
        assert_eq!(label(&odd), "holds on ext4 and xfs; not on btrfs (differently on xfs: db: lost)");
    }
}
