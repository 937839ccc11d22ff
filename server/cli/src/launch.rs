//! What the cluster launchers (`seedfall slurm`, `seedfall kube`) share:
//! the seedfall command each shard runs, checked before anything is
//! submitted, and the shell line that runs shard `$i` of it.
//!
//! A shard's task succeeds when it wrote its result, whatever the result
//! says: exit 1 (something failed) is the sweep's verdict, which the merge
//! gives. Only a shard that could not finish (exit 2, a signal) fails its
//! task, so schedulers retry crashes, not findings.

/// The commands that shard.
pub const SHARDED: [&str; 3] = ["run", "explore", "mutate"];

/// The wrapped command, checked: `run -c x.json -seeds 1-800 ...`.
#[derive(Debug)]
pub struct Wrapped {
    pub args: Vec<String>,
}

impl Wrapped {
    pub fn parse(args: &[String]) -> Result<Wrapped, String> {
        let Some(cmd) = args.first() else {
            return Err(format!("give the command the shards run after --, such as: -- run -c seedfall.json -seeds 1-10000 (one of {})", SHARDED.join(", ")));
        };
        if !SHARDED.contains(&cmd.as_str()) {
            return Err(format!("`{cmd}` does not shard: give one of {}", SHARDED.join(", ")));
        }
        for a in &args[1..] {
            let name = a.trim_start_matches('-').split('=').next().unwrap_or("");
            if a.starts_with('-') && ["shard", "json", "junit", "sync"].contains(&name) {
                return Err(format!("{a}: the launcher sets -shard, -json and -sync for each shard (and -junit on the merge); leave them out"));
            }
        }
        Ok(Wrapped { args: args.to_vec() })
    }

    pub fn command(&self) -> &str {
        &self.args[0]
    }

    fn has_jobs(&self) -> bool {
        self.args.iter().any(|a| a == "-j" || a.starts_with("-j") && a[2..].parse::<u32>().is_ok() || a == "--jobs" || a.starts_with("--jobs="))
    }

    /// The config the command names (`-c`), or the default.
    pub fn config(&self) -> String {
        let mut it = self.args.iter();
        while let Some(a) = it.next() {
            if a == "-c" || a == "--config" || a == "-config" {
                return it.next().cloned().unwrap_or_default();
            }
            if let Some(v) = a.strip_prefix("--config=").or_else(|| a.strip_prefix("-config=")) {
                return v.to_string();
            }
        }
        "seedfall.json".into()
    }

    /// The shell lines that run shard `$i` (1-based, in the shell variable
    /// `i`) of `count` and write `results/shard-NNNNN.json`; `jobs` is the
    /// shell word for -j when the command does not give one.
    pub fn shard_script(&self, seedfall: &str, count: u32, results: &str, jobs: &str) -> String {
        let mut words: Vec<String> = vec![quote(seedfall)];
        words.extend(self.args.iter().map(|a| quote(a)));
        if !self.has_jobs() {
            words.push("-j".into());
            words.push(jobs.into());
        }
        words.push("-shard".into());
        words.push(format!("\"$i/{count}\""));
        if self.command() == "explore" {
            words.push("-sync".into());
            words.push(quote(&format!("{results}/sync")));
        }
        words.push("-json".into());
        words.push(format!("{}/shard-$(printf %05d \"$i\").json", quote(results)));
        format!(
            "{} && rc=0 || rc=$?\n# 1 is a verdict (something failed), which the merge gives: the shard is done.\nif [ \"$rc\" -le 1 ]; then exit 0; fi\nexit \"$rc\"\n",
            words.join(" ")
        )
    }

    /// The shell line of the merge step.
    pub fn merge_script(&self, seedfall: &str, results: &str) -> String {
        let r = quote(results);
        format!("{} merge -json={r}/merged.json -junit {r}/junit.xml {r}/shard-*.json && rc=0 || rc=$?\necho \"$rc\" > {r}/merge.exit\nexit \"$rc\"\n", quote(seedfall))
    }
}

/// `word` as one POSIX shell word.
pub fn quote(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
        return word.to_string();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(args: &[&str]) -> Result<Wrapped, String> {
        Wrapped::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn checks_the_wrapped_command() {
        assert!(w(&[]).is_err());
        assert!(w(&["replay", "-seed", "1"]).unwrap_err().contains("does not shard"));
        assert!(w(&["run", "-shard", "1/2"]).unwrap_err().contains("sets -shard"));
        assert_eq!(w(&["run", "-c", "a b.json"]).unwrap().config(), "a b.json");
    }

    #[test]
    fn quotes_what_the_shell_would_split() {
        assert_eq!(quote("seeds"), "seeds");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        let s = w(&["run", "-c", "x.json", "-seeds", "1-80"]).unwrap().shard_script("/bin/seedfall", 8, "out dir", "2");
        assert!(s.starts_with("/bin/seedfall run -c x.json -seeds 1-80 -j 2 -shard \"$i/8\" -json 'out dir'/shard-$(printf %05d \"$i\").json"), "{s}");
    }
}
