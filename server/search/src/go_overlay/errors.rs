//! Linux's error texts in package `syscall` on wasip1, for every Go build.
//!
//! Go's wasip1 port has its own table of error texts (`tables_wasip1.go`):
//! `"No space left on device"`, `"Bad file number"`, `"I/O error"`, where
//! Go on Linux says `"no space left on device"`, `"bad file descriptor"`,
//! `"input/output error"`. Programs match these texts: nats-server tells a
//! full disk by `strings.Contains(err.Error(), "no space left")` and then
//! disables JetStream on that server, so under the wasip1 texts it took a
//! path it never takes on Linux. The overlay rewrites each text of the
//! wasip1 table with Linux's for the same errno name, both read from the
//! toolchain that builds (`zerrors_linux_amd64.go`), so a guest's errors read
//! as on the machines it is meant for. Errno values are untouched: only
//! what `Errno.Error()` returns changes. A name Linux lacks keeps its text.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Part of a Go build's fingerprint: bump when `files` changes what it writes.
pub const VERSION: &str = "1";

/// Bound on the errno names either table may have (Linux has 133).
const NAMES_MAX: usize = 1024;

/// The rewritten `tables_wasip1.go`, as an overlay entry.
pub fn files(goroot: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let syscall = goroot.join("src/syscall");
    let read = |name: &str| std::fs::read_to_string(syscall.join(name)).map_err(|e| format!("cannot read {}: {e}", syscall.join(name).display()));
    let linux = linux_texts(&read("zerrors_linux_amd64.go")?)?;
    let path = syscall.join("tables_wasip1.go");
    let text = rewrite(&read("tables_wasip1.go")?, &linux).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(vec![(path, text)])
}

/// Errno name to Linux's text: the `Errno(0x..)` constants joined with the
/// `errors` table's `number: "text"` entries.
fn linux_texts(source: &str) -> Result<BTreeMap<String, String>, String> {
    let mut numbers: BTreeMap<u64, String> = BTreeMap::new();
    let mut in_table = false;
    let mut names: Vec<(String, u64)> = Vec::new();
    for line in source.lines() {
        if line.starts_with("var errors = [...]string{") {
            in_table = true;
            continue;
        }
        if in_table {
            if line == "}" {
                in_table = false;
                continue;
            }
            if let Some((n, text)) = line.trim().split_once(':') {
                if let (Ok(n), Some(text)) = (n.trim().parse::<u64>(), quoted(text)) {
                    numbers.insert(n, text);
                }
            }
            continue;
        }
        // `	ENOSPC          = Errno(0x1c)`
        let t = line.trim();
        if let Some((name, value)) = t.split_once('=') {
            let (name, value) = (name.trim(), value.trim());
            if name.starts_with('E') && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()) {
                if let Some(hex) = value.strip_prefix("Errno(0x").and_then(|v| v.strip_suffix(')')) {
                    if let Ok(n) = u64::from_str_radix(hex, 16) {
                        names.push((name.to_string(), n));
                    }
                }
            }
        }
        if names.len() > NAMES_MAX || numbers.len() > NAMES_MAX {
            return Err(format!("more than {NAMES_MAX} errno names: not Go's Linux table"));
        }
    }
    let texts: BTreeMap<String, String> = names.into_iter().filter_map(|(name, n)| numbers.get(&n).map(|t| (name, t.clone()))).collect();
    if !texts.contains_key("ENOSPC") || !texts.contains_key("EIO") {
        return Err("Go's Linux errno table (syscall/zerrors_linux_amd64.go) has no ENOSPC or EIO text: its layout changed".into());
    }
    Ok(texts)
}

/// `"no space left on device",` to its text (no escapes in these tables).
fn quoted(s: &str) -> Option<String> {
    let s = s.trim().strip_suffix(',')?.trim();
    let inner = s.strip_prefix('"')?.strip_suffix('"')?;
    (!inner.contains('"') && !inner.contains('\\')).then(|| inner.to_string())
}

/// The wasip1 table with each `NAME: "text",` entry of `var errorstr`
/// given Linux's text for NAME.
fn rewrite(source: &str, linux: &BTreeMap<String, String>) -> Result<String, String> {
    let mut out = String::with_capacity(source.len());
    let (mut in_table, mut replaced) = (false, 0);
    for line in source.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if bare.starts_with("var errorstr = [...]string{") {
            in_table = true;
        } else if in_table && bare == "}" {
            in_table = false;
        } else if in_table {
            if let Some((name, rest)) = bare.trim().split_once(':') {
                if let (Some(text), Some(_)) = (linux.get(name.trim()), quoted(rest)) {
                    out.push_str(&format!("\t{}: \"{text}\",\n", name.trim()));
                    replaced += 1;
                    continue;
                }
            }
        }
        out.push_str(line);
    }
    if replaced < 20 {
        return Err(format!("only {replaced} errno texts of `var errorstr` matched Linux's names: the table's layout changed (seedfall's Go error-text overlay cannot follow it)"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_installed_go_gets_linux_texts_for_wasip1_errnos() {
        let Ok(root) = super::super::goroot() else { return };
        let files = files(&root).unwrap();
        let text = &files[0].1;
        assert!(text.contains("\tENOSPC: \"no space left on device\",\n"), "{text}");
        assert!(text.contains("\tEBADF: \"bad file descriptor\",\n"));
        assert!(text.contains("\tECONNREFUSED: \"connection refused\",\n"));
        assert!(!text.contains("No space left on device"));
        // Only the table changes: the errno values and the rest stay.
        let original = std::fs::read_to_string(root.join("src/syscall/tables_wasip1.go")).unwrap();
        assert_eq!(text.lines().count(), original.lines().count());
        let constant = original.lines().find(|l| l.contains("ENOSPC") && l.contains("Errno =")).expect("wasip1 defines ENOSPC");
        assert!(text.lines().any(|l| l == constant), "{constant}");
    }

    #[test]
    fn a_table_of_another_layout_is_an_error_not_a_silent_copy() {
        let linux: BTreeMap<String, String> = [("ENOSPC".to_string(), "no space left on device".to_string())].into();
        let e = rewrite("package syscall\nvar errorstr = map[Errno]string{\n\tENOSPC: \"No space\",\n}\n", &linux).unwrap_err();
        assert!(e.contains("layout changed"), "{e}");
    }
}
