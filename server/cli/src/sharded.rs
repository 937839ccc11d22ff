//! The output flags of the commands that shard (run, explore, mutate). A
//! shard's result itself is `seedfall_search::shard_result`.
use seedfall_search::shard::Shard;

/// `-json` and `-shard`.
#[derive(clap::Args)]
pub struct ShardOutput {
    /// Print one JSON document instead of text; with FILE, write it there
    /// (atomically) and print the text as well.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub json: Option<String>,
    /// Do only shard i of n of the work (`2/8`: every n-th seed; an
    /// exploration also gets its own exploration seed), for `seedfall
    /// merge`: write its result with -json FILE.
    #[arg(long, value_name = "i/n")]
    pub shard: Option<String>,
}

impl ShardOutput {
    /// Whether the text is printed: not when the JSON document goes to stdout.
    pub fn text(&self) -> bool {
        self.json.as_deref() != Some("")
    }
}

/// `-shard i/n`, parsed; on error, prints it and returns the exit code.
pub fn parse_or_exit(text: Option<&str>) -> Result<Option<Shard>, i32> {
    match text.map(Shard::parse) {
        None => Ok(None),
        Some(Ok(s)) => Ok(Some(s)),
        Some(Err(e)) => {
            eprintln!("seedfall: -shard: {e}");
            Err(2)
        }
    }
}

