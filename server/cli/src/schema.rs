//! `seedfall schema`: the JSON Schema of `seedfall.json`, for editors.
//! `seedfall_sim::config::json_schema` makes it from the tables the config
//! parser takes its fields from, so what an editor completes and flags is
//! what seedfall reads. extension/schema/seedfall.schema.json is its output
//! (scripts/gen-schema), checked by tests/config_schema.rs.
use clap::Args;
use std::path::PathBuf;

#[derive(Args)]
pub struct SchemaArgs {
    /// Write the schema to FILE (atomically) instead of printing it.
    #[arg(short = 'o', long = "out", value_name = "FILE")]
    pub out: Option<PathBuf>,
}

pub fn main(a: SchemaArgs) -> i32 {
    let mut text = serde_json::to_string_pretty(&seedfall_sim::config::json_schema()).expect("a JSON value prints");
    text.push('\n');
    let Some(out) = a.out else {
        print!("{text}");
        return 0;
    };
    match seedfall_search::cache::write_atomic(&out, text.as_bytes()) {
        Ok(()) => {
            println!("wrote {}: the JSON Schema of seedfall.json", crate::output::relative(&out));
            0
        }
        Err(e) => {
            eprintln!("seedfall schema: cannot write {}: {e}", out.display());
            2
        }
    }
}
