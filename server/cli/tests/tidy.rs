//! Tidy: every Rust source file opens with a `//!` doc saying what it owns,
//! and no test is skipped or expected to panic (a test that cannot fail is
//! not a test).
use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            if !matches!(p.file_name().and_then(|n| n.to_str()), Some("target" | "node_modules" | ".seedfall")) {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn every_source_file_has_a_module_doc_and_no_skipped_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in ["server", "sdk/rust", "tests/guests", "examples"] {
        if root.join(dir).is_dir() {
            rust_files(&root.join(dir), &mut files);
        }
    }
    assert!(files.len() > 20, "found only {} files", files.len());
    let mut problems = Vec::new();
    let banned = [concat!("#[", "ignore"), concat!("#[", "should_panic")];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        if !text.trim_start().starts_with("//!") {
            problems.push(format!("{}: does not open with a //! module doc", f.display()));
        }
        for b in banned {
            if text.contains(b) {
                problems.push(format!("{}: uses {b}]", f.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
