//! The merge of mutation shards (`mutate -shard i/n`), printed: the merge
//! itself is `seedfall_search::merge::mutate`.
use seedfall_search::shard_result::Read;

/// Prints the merge of a mutation run's shards; writes `-json`.
pub fn merge(reads: &[Read], json: Option<&str>) -> Result<i32, String> {
    let first = &reads[0];
    let doc = seedfall_search::merge::mutate::merge(reads)?;
    let text = json != Some("");
    if let Some(dest) = json {
        crate::sweep_report::emit_json(dest, &doc)?;
    }
    if text {
        let report: crate::mutate::Report = serde_json::from_value(doc).map_err(|e| format!("{}: {e}", first.file))?;
        let config: String = first.field("config")?;
        print!("{}", crate::mutate::text_of(&config, &report));
    }
    Ok(0)
}
