//! Paths in the files seedfall writes are relative to the config's folder,
//! so a workspace that is moved or cloned keeps working: readers join them
//! to the config's folder again (a path recorded absolute by an older
//! version joins to itself).
use std::path::{Component, Path, PathBuf};

/// `path` as seen from the folder `from` (both made absolute against the
/// current folder first), with `..` where it lies outside. A path on another
/// root stays absolute.
pub fn relative(from: &Path, path: &Path) -> PathBuf {
    let (Ok(from), Ok(path)) = (std::path::absolute(from), std::path::absolute(path)) else { return path.to_path_buf() };
    let (from, path) = (normal(&from), normal(&path));
    let (a, b): (Vec<Component>, Vec<Component>) = (from.components().collect(), path.components().collect());
    if a.first() != b.first() {
        return path;
    }
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..a.len() {
        out.push("..");
    }
    for c in &b[common..] {
        out.push(c);
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Removes `.` and folds `x/..`, without touching the file system.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `path` as recorded in a file of this config.
pub fn recorded(config: &seedfall_sim::Config, path: &Path) -> String {
    relative(config.dir(), path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_inside_and_outside() {
        assert_eq!(relative(Path::new("/w/ex/kv"), Path::new("/w/ex/kv/main.go")), PathBuf::from("main.go"));
        assert_eq!(relative(Path::new("/w/ex/kv"), Path::new("/w/sdk/go/sim/a.go")), PathBuf::from("../../sdk/go/sim/a.go"));
        assert_eq!(relative(Path::new("/w/ex/kv/"), Path::new("/w/ex/kv/./x/../y.go")), PathBuf::from("y.go"));
        assert_eq!(relative(Path::new("/w"), Path::new("/w")), PathBuf::from("."));
        assert_eq!(Path::new("/w/ex").join(relative(Path::new("/w/ex"), Path::new("/w/a/b"))), PathBuf::from("/w/ex/../a/b"));
    }
}
