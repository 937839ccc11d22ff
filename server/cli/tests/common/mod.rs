//! Test harness: runs the real `seedfall` binary on real guests.
//!
//! Guests are built once per machine into a shared cache
//! (`target/seedfall-test-cache`), so only the first test run pays for
//! `go build` and compilation.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::Command;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

pub fn guests() -> PathBuf {
    repo().join("tests/guests")
}

pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn seedfall(args: &[&str]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(args)
        .current_dir(repo())
        .env("SEEDFALL_CACHE_DIR", repo().join("target/seedfall-test-cache"))
        .output()
        .expect("run seedfall");
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

pub fn json(out: &Out) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}):\n{}\nstderr:\n{}", out.stdout, out.stderr))
}

/// A fresh folder for one test.
pub fn scratch(name: &str) -> PathBuf {
    let dir = repo().join("target/test-scratch").join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a config with one node per (name, recipe, args) into a scratch folder.
pub fn config(test: &str, body: &str) -> PathBuf {
    let dir = scratch(test);
    let path = dir.join("seedfall.json");
    let body = body.replace("$GUESTS", &guests().display().to_string());
    std::fs::write(&path, body).unwrap();
    path
}

pub fn go_node(name: &str, mode: &str) -> String {
    format!(r#"{{ "name": "{name}", "go": {{ "dir": "$GUESTS/go-basic" }}, "args": ["-mode", "{mode}"] }}"#)
}

pub fn rust_node(name: &str, mode: &str) -> String {
    format!(r#"{{ "name": "{name}", "cargo": {{ "dir": "$GUESTS/rust-basic" }}, "args": ["{mode}"] }}"#)
}

pub fn one_node_config(test: &str, node: &str, extra: &str) -> PathBuf {
    config(test, &format!(r#"{{ "duration": "5s", {extra} "nodes": [ {node} ] }}"#))
}

/// The line number of the first line containing `needle` in `file`.
pub fn line_of(file: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap_or_else(|| panic!("{needle} not in {}", file.display())) + 1
}

/// Output with wall-clock figures (`, 3ms real)`) removed: they are the only
/// part of seedfall's output allowed to differ between identical runs.
pub fn without_real_times(text: &str) -> String {
    text.lines()
        .map(|l| match (l.find(" scheduler steps, "), l.rfind(" real)")) {
            (Some(a), Some(b)) if a < b => format!("{} scheduler steps){}", &l[..a], &l[b + " real)".len()..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A child run with its peak resident memory and wall time.
pub struct Measured {
    pub out: Out,
    pub rss_mb: u64,
    pub wall: std::time::Duration,
}

/// Runs seedfall and measures the child's peak resident memory.
pub fn measured(args: &[&str]) -> Measured {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let started = std::time::Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_seedfall"))
        .args(args)
        .current_dir(repo())
        .env(
            "SEEDFALL_CACHE_DIR",
            repo().join("target/seedfall-test-cache"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run seedfall");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t1 = std::thread::spawn(move || {
        let mut s = Vec::new();
        so.read_to_end(&mut s).unwrap();
        s
    });
    let t2 = std::thread::spawn(move || {
        let mut s = Vec::new();
        se.read_to_end(&mut s).unwrap();
        s
    });
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value to be written over; the pid
    // is our own child, waited for only here.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = child.id() as libc::pid_t;
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    let wall = started.elapsed();
    let stdout = String::from_utf8_lossy(&t1.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&t2.join().unwrap()).into_owned();
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    std::mem::forget(child); // already reaped
    Measured {
        out: Out {
            code,
            stdout,
            stderr,
        },
        rss_mb: usage.ru_maxrss as u64 / 1024,
        wall,
    }
}
