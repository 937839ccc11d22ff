//! The part of the Go build overlay that puts the standard library's `net`
//! package on the simulated network (a `go` recipe with `"net": true`).
//!
//! Go's `net` on wasip1 opens sockets on an in-process fake network. The
//! overlay renames functions in copies of the toolchain's own files
//! (`socket` in net_fake.go, `(*netFD).accept` in fd_fake.go, the TCP
//! keepalive options in sockopt_fake.go and tcpsockopt_stub.go) and adds
//! `sdk/go/overlay/net_seedfall_wasip1.go`, which defines them again on the
//! host's socket calls. Go's source is patched at build time from the
//! toolchain that builds, never copied into this repository, and a patch
//! that does not apply exactly once is an error rather than an overlay that
//! silently does nothing. `sdk/go/overlay/make-overlay.sh` does the same for
//! builds outside seedfall.
use std::path::{Path, PathBuf};

/// Our file added to package net; its `//go:build ignore` keeps it out of
/// every build in the repository and becomes `wasip1` in the overlay.
pub const SEEDFALL_NET: &str = include_str!("../../../../sdk/go/overlay/net_seedfall_wasip1.go");

/// (file in $GOROOT/src/net, line start to rename, new start)
const RENAMES: &[(&str, &str, &str)] = &[
    ("net_fake.go", "func socket(", "func fakeSocket("),
    ("fd_fake.go", "func (fd *netFD) accept(", "func (fd *netFD) fakeAccept("),
    // wasip1 refuses TCP keepalive (ENOPROTOOPT); servers that check the
    // error of SetKeepAlive (etcd since v3.5.5) then refuse every
    // connection. Ours accepts the options: the simulated network sends no
    // probes.
    ("sockopt_fake.go", "func setKeepAlive(", "func fakeSetKeepAlive("),
    ("tcpsockopt_stub.go", "func setKeepAliveIdle(", "func fakeSetKeepAliveIdle("),
    ("tcpsockopt_stub.go", "func setKeepAliveInterval(", "func fakeSetKeepAliveInterval("),
    ("tcpsockopt_stub.go", "func setKeepAliveCount(", "func fakeSetKeepAliveCount("),
];

/// `text` with the one line starting with `old` starting with `new`.
pub(super) fn rename(text: &str, old: &str, new: &str) -> Option<String> {
    let hits = text.lines().filter(|l| l.starts_with(old)).count();
    if hits != 1 {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    for line in text.split_inclusive('\n') {
        match line.strip_prefix(old) {
            Some(rest) => {
                out.push_str(new);
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
    }
    Some(out)
}

/// Copies of the toolchain's files in `src` (a folder of GOROOT holding
/// package `package`) with `renames` applied: (path in GOROOT, content to
/// see there). One file may take several renames; they apply in turn to one
/// copy. A rename that does not match exactly one line is an error naming
/// the file.
pub(super) fn renamed_files(src: &Path, package: &str, renames: &[(&str, &str, &str)]) -> Result<Vec<(PathBuf, String)>, String> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for (file, old, new) in renames {
        let path = src.join(file);
        let text = match out.iter().position(|(p, _)| *p == path) {
            Some(i) => out.remove(i).1,
            None => std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e} (is this Go 1.22 or newer?)", path.display()))?,
        };
        let patched = rename(&text, old, new).ok_or_else(|| {
            format!("\"{old}\" is not exactly once at the start of a line in {}: this Go release changed its {package} package, and the overlay needs updating", path.display())
        })?;
        out.push((path, patched));
    }
    Ok(out)
}

/// The files of the net overlay: (path in GOROOT, content to see there).
pub fn files(goroot: &Path) -> Result<Vec<(PathBuf, String)>, String> {
    let src = goroot.join("src/net");
    let mut out = renamed_files(&src, "net", RENAMES)?;
    let ours = rename(SEEDFALL_NET, "//go:build ignore", "//go:build wasip1").expect("net_seedfall_wasip1.go has one //go:build ignore line");
    out.push((src.join("net_seedfall_wasip1.go"), ours));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rename_needs_exactly_one_line() {
        assert_eq!(rename("a\nfunc socket(x)\nb\n", "func socket(", "func fakeSocket(").unwrap(), "a\nfunc fakeSocket(x)\nb\n");
        assert!(rename("func socket(\nfunc socket(\n", "func socket(", "x").is_none());
        assert!(rename("nothing here\n", "func socket(", "x").is_none());
    }

    #[test]
    fn our_file_stays_out_of_normal_builds() {
        assert_eq!(SEEDFALL_NET.lines().filter(|l| *l == "//go:build ignore").count(), 1);
    }
}
