//! The merge of a mutation run's shards (`mutate -shard i/n`): each shard
//! ran the baseline and every mutation over its share of the seeds; the
//! merge unites the failing seeds, which gives the unsharded document
//! exactly (its lists are in seed order, and a seed fails or passes
//! wherever it runs).
use crate::shard_result::Read;
use serde_json::Value;
use std::collections::BTreeSet;

/// The merged `-json` document of a mutation run.
pub fn merge(reads: &[Read]) -> Result<Value, String> {
    let first = &reads[0];
    let docs: Vec<Value> = reads.iter().map(Read::value).collect::<Result<_, _>>()?;
    let mut doc = docs[0].clone();
    let union = |name: &str, pick: &dyn Fn(&Value) -> Option<Vec<u64>>| -> Result<Vec<u64>, String> {
        let mut all = BTreeSet::new();
        for (r, d) in reads.iter().zip(&docs) {
            let seeds = pick(d).ok_or_else(|| format!("{}: {name}: expected a list of seeds", r.file))?;
            all.extend(seeds);
        }
        Ok(all.into_iter().collect())
    };
    let seeds_at = |path: &[&str]| {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        move |v: &Value| -> Option<Vec<u64>> {
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
    let mutations: Vec<Value> = first.field("mutations")?;
    for r in reads {
        let theirs: Vec<Value> = r.field("mutations")?;
        let names = |m: &[Value]| m.iter().map(|x| x["mutation"].clone()).collect::<Vec<_>>();
        if names(&theirs) != names(&mutations) {
            return Err(format!("{} ran other mutations than {}: {:?} against {:?}", r.file, first.file, names(&theirs), names(&mutations)));
        }
    }
    for i in 0..mutations.len() {
        let index = i.to_string();
        let failed = union("$.mutations[].failed_seeds", &seeds_at(&["mutations", &index, "failed_seeds"]))?;
        let new = union("$.mutations[].new_failures", &seeds_at(&["mutations", &index, "new_failures"]))?;
        doc["mutations"][i]["killed"] = Value::Bool(!new.is_empty());
        doc["mutations"][i]["failed_seeds"] = serde_json::to_value(failed).unwrap();
        doc["mutations"][i]["new_failures"] = serde_json::to_value(new).unwrap();
    }
    Ok(doc)
}
