//! Flags are written Go-style (`-seeds 1-200`, `-seed 17`, `-json`); clap
//! wants `--seeds`. A single-dash word of two or more letters becomes a
//! double-dash flag; `-c`, `-j 2` and `-j2` are left alone.
use std::ffi::OsString;

pub fn normalize(args: impl IntoIterator<Item = OsString>) -> Vec<OsString> {
    // After `--` come another command's words (`seedfall slurm -- run ...`):
    // they are passed on as the user wrote them.
    let mut passthrough = false;
    args.into_iter()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 || passthrough {
                return a;
            }
            if a == "--" {
                passthrough = true;
                return a;
            }
            let Some(s) = a.to_str() else { return a };
            let name = s.strip_prefix('-').filter(|r| !r.starts_with('-')).map(|r| r.split('=').next().unwrap_or(r));
            match name {
                Some(n) if n.len() >= 2 && n.chars().all(|c| c.is_ascii_alphabetic() || c == '-') => OsString::from(format!("-{s}")),
                _ => a,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(OsString::from)).into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn go_style_flags_become_long_flags() {
        assert_eq!(n(&["seedfall", "run", "-c", "x.json", "-seeds", "1-2", "-j2", "-json"]), ["seedfall", "run", "-c", "x.json", "--seeds", "1-2", "-j2", "--json"]);
        assert_eq!(n(&["seedfall", "replay", "-seed=4", "--seed", "5"]), ["seedfall", "replay", "--seed=4", "--seed", "5"]);
        assert_eq!(n(&["seedfall", "slurm", "-shards", "8", "--", "run", "-seeds", "1-9"]), ["seedfall", "slurm", "--shards", "8", "--", "run", "-seeds", "1-9"]);
    }
}
