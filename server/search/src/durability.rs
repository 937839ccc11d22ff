//! Durability labels: is a failure a finding under the file system people
//! run, or only under strict POSIX?
//!
//! Every failure is found under some file-system model (`ext4` by default,
//! `posix` when the config says so). It is run again, with exactly the
//! faults it had, under the other model, and labelled: "fails under ext4
//! too", "fails only under strict POSIX (portable durability)", and the
//! reverse. A run without a crash never reads what a disk kept, so the
//! model cannot matter and nothing is re-run.
use seedfall_sim::disk::FsModel;
use seedfall_sim::outcome::ModelCheck;
use seedfall_sim::{run, Fault, Outcome, Program, RunOptions, Verdict};

/// Which model the run used: one name, or `ext4+posix` for a mix.
pub fn found_under(models: &[FsModel]) -> (String, FsModel) {
    let any_posix = models.contains(&FsModel::Posix);
    let any_ext4 = models.contains(&FsModel::Ext4);
    match (any_ext4, any_posix) {
        (true, true) => ("ext4+posix".into(), FsModel::Ext4),
        (false, true) => ("posix".into(), FsModel::Ext4),
        _ => ("ext4".into(), FsModel::Posix),
    }
}

fn label(found: &str, other: FsModel, fails: bool) -> String {
    match (found, other, fails) {
        (_, _, true) if found == "ext4+posix" => "fails with every disk under ext4 too".into(),
        (_, _, false) if found == "ext4+posix" => "fails only with some disks under strict POSIX".into(),
        (_, FsModel::Ext4, true) => "fails under ext4 too".into(),
        (_, FsModel::Ext4, false) => "fails only under strict POSIX (portable durability)".into(),
        (_, FsModel::Posix, true) => "fails under strict POSIX too".into(),
        (_, FsModel::Posix, false) => "fails only under ext4".into(),
    }
}

fn same_failure(a: &Outcome, b: &Outcome) -> bool {
    match (&a.failure, &b.failure) {
        // The same finding: the other model may fail with other numbers.
        (Some(x), Some(y)) => crate::finding::Signature::of(x) == crate::finding::Signature::of(y),
        _ => false,
    }
}

/// Re-checks a failing outcome under the other model (one more run, unless
/// no crash happened) and stores the label in it.
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
    let (found, other) = found_under(&outcome.disk_models);
    let crashed = outcome.schedule.faults.iter().flatten().any(|f| matches!(f, Fault::Crash { .. }));
    // A different failure under the other model still fails there: say how.
    let (fails, differently) = if crashed {
        let again = run(program, &outcome.schedule, &RunOptions { model: Some(other), disk_trees: false, guest_profile: None, ..options.clone() });
        let differently = again.failure.as_ref().filter(|_| !same_failure(outcome, &again)).map(|f| format!("{}: {}", f.node, f.message));
        (again.verdict == Verdict::Fail, differently)
    } else {
        (true, None)
    };
    let label = match (crashed, differently) {
        (false, _) => "fails under any file-system model (no crash before it)".into(),
        (true, Some(how)) => format!("{} (differently: {how})", label(&found, other, true)),
        (true, None) => label(&found, other, fails),
    };
    outcome.model_check = Some(ModelCheck { found_under: found, other: other.name().into(), fails_under_other: fails, label });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_both_models() {
        assert_eq!(found_under(&[FsModel::Ext4, FsModel::Ext4]), ("ext4".into(), FsModel::Posix));
        assert_eq!(found_under(&[FsModel::Posix]), ("posix".into(), FsModel::Ext4));
        assert_eq!(label("posix", FsModel::Ext4, false), "fails only under strict POSIX (portable durability)");
        assert_eq!(label("posix", FsModel::Ext4, true), "fails under ext4 too");
        assert_eq!(label("ext4", FsModel::Posix, true), "fails under strict POSIX too");
    }
}
