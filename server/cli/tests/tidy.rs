//! Tidy: every Rust source file opens with a `//!` doc saying what it owns,
//! and no test is skipped or expected to panic (a test that cannot fail is
//! not a test); the simulator's source keeps its architecture invariants
//! (server/sim/src/lib.rs); under search's snapshots only `os` says `unsafe`.
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

/// server/sim/src keeps what sim/lib.rs promises: no threads, no OS
/// randomness, no hash-ordered collections, no sockets; the wall clock only
/// where a run measures itself (never read back into the simulation), and
/// the host's files only where a program is built. A new use fails here,
/// to be reviewed and, if sound, added with its reason.
#[test]
fn the_simulator_keeps_its_architecture_invariants() {
    let sim = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sim/src");
    let mut files = Vec::new();
    rust_files(&sim, &mut files);
    assert!(files.len() > 40, "found only {} files in {}", files.len(), sim.display());
    // (what, tokens, files allowed with why)
    let rules: [(&str, &[&str], &[(&str, &str)]); 6] = [
        ("a thread", &["thread::spawn(", "thread::scope(", "thread::Builder"], &[]),
        ("OS randomness", &["OsRng", "thread_rng", "getrandom", "from_entropy", "rand::random"], &[]),
        ("a hash-ordered collection", &["HashMap", "HashSet"], &[("lib.rs", "the invariant's own wording")]),
        ("a host socket", &["TcpListener", "TcpStream", "UdpSocket", "UnixStream"], &[]),
        (
            "the wall clock",
            &["Instant::now", "SystemTime"],
            &[
                ("world/mod.rs", "Stats: how long the run took here"),
                ("snapshot.rs", "Stats of a run resumed from a snapshot"),
                ("wasi/mod.rs", "-profile: host time per call kind"),
                ("scheduler.rs", "Stats: time in guest code"),
            ],
        ),
        (
            "a host file",
            &["std::fs::", "File::open", "File::create"],
            &[
                ("files.rs", "reading a config, module or seeded file while the program is built"),
                ("engine.rs", "the kernel's version, for how pool slots are reset: host cost, never seen by a guest"),
            ],
        ),
    ];
    let mut problems = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(&sim).unwrap().to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(f).unwrap();
        // Tests of a module (its `mod tests`, or a tests.rs) may use what
        // they like: they are not the run.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        if rel.ends_with("tests.rs") {
            continue;
        }
        for (what, tokens, allowed) in &rules {
            if allowed.iter().any(|(file, _)| *file == rel) {
                continue;
            }
            for t in *tokens {
                if let Some(line) = code.lines().position(|l| l.contains(t) && !l.trim_start().starts_with("//") && !in_string(l, t)) {
                    problems.push(format!("server/sim/src/{rel}:{}: {what} ({t})", line + 1));
                }
            }
        }
    }
    assert!(problems.is_empty(), "the simulator must not use these (sim/lib.rs):\n{}", problems.join("\n"));
}

/// The snapshot runner's fork, pipes, poll and signals are in one module,
/// behind safe wrappers each with its `// SAFETY:`; the policy around them
/// (runner, client, wire) has no `unsafe` of its own.
#[test]
fn only_the_snapshots_os_module_is_unsafe() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../search/src/snapshots");
    let mut files = Vec::new();
    rust_files(&dir, &mut files);
    assert!(files.iter().any(|f| f.ends_with("os.rs")), "no os.rs in {}", dir.display());
    let unsafe_elsewhere: Vec<String> = files.iter().filter(|f| !f.ends_with("os.rs")).filter(|f| std::fs::read_to_string(f).unwrap().lines().any(|l| l.contains("unsafe") && !l.trim_start().starts_with("//"))).map(|f| f.display().to_string()).collect();
    assert!(unsafe_elsewhere.is_empty(), "unsafe outside snapshots/os.rs: {}", unsafe_elsewhere.join(", "));
}

/// Whether `token` occurs in `line` only inside a string literal (teach.rs
/// quotes what a guest printed).
fn in_string(line: &str, token: &str) -> bool {
    let at = line.find(token).unwrap();
    line[..at].matches('"').count() % 2 == 1
}
