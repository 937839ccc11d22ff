//! Mutation shards (`mutate -shard i/n`): each shard runs the baseline and
//! every mutation over its share of the seeds; the merge unites the failing
//! seeds, which gives the unsharded report exactly (its lists are in seed
//! order, and a seed fails or passes wherever it runs).
use crate::merge::{field, MergeArgs};
use crate::sharded::Read;
use std::collections::BTreeSet;

pub fn merge(a: &MergeArgs, reads: &[Read]) -> Result<i32, String> {
    if a.report.is_some() || a.junit.is_some() {
        return Err("-report and -junit: a mutation run has neither; its merge prints the mutation table (-json for the document)".into());
    }
    let first = &reads[0];
    let docs: Vec<serde_json::Value> = reads.iter().map(Read::value).collect::<Result<_, _>>()?;
    let mut doc = docs[0].clone();
    let union = |name: &str, pick: &dyn Fn(&serde_json::Value) -> Option<Vec<u64>>| -> Result<Vec<u64>, String> {
        let mut all = BTreeSet::new();
        for (r, d) in reads.iter().zip(&docs) {
            let seeds = pick(d).ok_or_else(|| format!("{}: {name}: expected a list of seeds", r.file))?;
            all.extend(seeds);
        }
        Ok(all.into_iter().collect())
    };
    let seeds_at = |path: &[&str]| {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        move |v: &serde_json::Value| -> Option<Vec<u64>> {
            let mut at = v;
            for p in &path {
                at = match p.parse::<usize>() {
                    Ok(i) => at.get(i)?,
                    Err(_) => at.get(p.as_str())?,
                };
            }
            serde_json::from_value(at.clone()).ok()
        }
    };
    doc["baseline_failed_seeds"] = serde_json::to_value(union("$.baseline_failed_seeds", &seeds_at(&["baseline_failed_seeds"]))?).unwrap();
    let mutations: Vec<serde_json::Value> = field(first, "mutations")?;
    for r in reads {
        let theirs: Vec<serde_json::Value> = field(r, "mutations")?;
        let names = |m: &[serde_json::Value]| m.iter().map(|x| x["mutation"].clone()).collect::<Vec<_>>();
        if names(&theirs) != names(&mutations) {
            return Err(format!("{} ran other mutations than {}: {:?} against {:?}", r.file, first.file, names(&theirs), names(&mutations)));
        }
    }
    for i in 0..mutations.len() {
        let index = i.to_string();
        let failed = union("$.mutations[].failed_seeds", &seeds_at(&["mutations", &index, "failed_seeds"]))?;
        let new = union("$.mutations[].new_failures", &seeds_at(&["mutations", &index, "new_failures"]))?;
        doc["mutations"][i]["killed"] = serde_json::Value::Bool(!new.is_empty());
        doc["mutations"][i]["failed_seeds"] = serde_json::to_value(failed).unwrap();
        doc["mutations"][i]["new_failures"] = serde_json::to_value(new).unwrap();
    }
    let text = a.json.as_deref() != Some("");
    if let Some(dest) = &a.json {
        crate::sweep_report::emit_json(dest, &doc)?;
    }
    if text {
        let report: crate::mutate::Report = serde_json::from_value(doc).map_err(|e| format!("{}: {e}", first.file))?;
        let config: String = field(first, "config")?;
        print!("{}", crate::mutate::text_of(&config, &report));
    }
    Ok(0)
}
