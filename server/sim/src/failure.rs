//! Why a run failed, in the user's words: which node instance, what message,
//! and where in their source when the guest told us (a Go panic trace, a Rust
//! panic message).
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The guest exited with a non-zero code.
    Exit,
    /// A Go or Rust panic (recognised from its stderr).
    Panic,
    /// A wasm trap that was not a recognised panic.
    Trap,
    /// The node ran too long without blocking.
    Watchdog,
    /// The run hit one of its own bounds (steps, events).
    Limit,
    /// An always/always_or_unreachable was false, or an unreachable was reached.
    Property,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    /// The node instance, like `client#1`.
    pub node: String,
    pub message: String,
    /// `file:line` in the guest's source, when known.
    pub location: Option<String>,
    /// For a property: the details (JSON) of the failing evaluation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<String>,
    /// What probably went wrong and how to fix it, when seedfall can tell
    /// (a folder the disk never had).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    pub time_ns: u64,
    pub step: u64,
}

/// A Go panic: `panic: <msg>` then the goroutine trace; the location is the
/// first frame outside the runtime. Also `fatal error: <msg>`.
pub fn go_panic(stderr: &[String]) -> Option<(String, Option<String>)> {
    let start = stderr.iter().rposition(|l| l.starts_with("panic: ") || l.starts_with("fatal error: "))?;
    let line = &stderr[start];
    let message = line.split_once(": ").map(|(_, m)| m).unwrap_or(line).trim_end_matches(" [recovered]").to_string();
    let mut location = None;
    let rest = &stderr[start + 1..];
    for pair in rest.windows(2) {
        let (func, file) = (&pair[0], &pair[1]);
        if func.starts_with('\t') || !file.starts_with('\t') {
            continue;
        }
        if func.starts_with("runtime.") || func.starts_with("panic(") || func.starts_with("goroutine ") {
            continue;
        }
        let file = file.trim();
        let file = file.split(" +0x").next().unwrap_or(file);
        location = Some(file.to_string());
        break;
    }
    Some((message, location))
}

/// Rust's allocator failing: `memory allocation of 1048576 bytes failed`
/// on stderr, then an abort (a wasm `unreachable`).
pub fn rust_oom(stderr: &[String]) -> Option<&str> {
    stderr.iter().rev().take(4).find(|l| l.starts_with("memory allocation of ") && l.ends_with(" failed")).map(String::as_str)
}

/// A Rust panic: `thread 'main' panicked at src/main.rs:22:17:` then the
/// message on the following lines, until the `note:` line or, under
/// `RUST_BACKTRACE`, the `stack backtrace:` line (wasm32 has no backtrace to
/// print, so only that header would follow).
///
/// `frames` are the trap's wasm frames, innermost first, as function names
/// (mangled or not; empty when there is no trap). When the panic's place is
/// inside the Rust runtime (`std::process::id()` panics in std's own source
/// on wasip1), the location is the first frame outside the runtime, with the
/// runtime crate and place after it:
/// `rust_basic::pid (std: library/std/src/sys/pal/wasi/os.rs:106)`.
pub fn rust_panic(stderr: &[String], frames: &[String]) -> Option<(String, Option<String>)> {
    let start = stderr.iter().rposition(|l| l.contains("panicked at "))?;
    let header = &stderr[start];
    let at = header.split("panicked at ").nth(1)?.trim_end_matches(':');
    // Old Rust put the message first: `panicked at 'msg', src/main.rs:1:2`.
    let (message, place) = if let Some(rest) = at.strip_prefix('\'') {
        let (msg, place) = rest.rsplit_once("', ")?;
        (msg.to_string(), place.to_string())
    } else {
        let msg: Vec<&str> = stderr[start + 1..]
            .iter()
            .take_while(|l| !l.starts_with("note: ") && l.as_str() != RUST_BACKTRACE_HEADER)
            .map(String::as_str)
            .collect();
        (msg.join("\n"), at.to_string())
    };
    // file:line:col -> file:line
    let location = match place.rsplitn(3, ':').collect::<Vec<_>>().as_slice() {
        [_col, line, file] => format!("{file}:{line}"),
        _ => place,
    };
    let Some(runtime_place) = rust_runtime_place(&location) else { return Some((message, Some(location))) };
    // `library/core/src/...` -> `core`: the runtime crate the panic is in.
    let runtime_crate = runtime_place.split('/').nth(1).unwrap_or("std");
    let location = match frames.iter().map(|f| demangle(f)).find(|f| !is_rust_runtime_frame(f)) {
        Some(user) => format!("{user} ({runtime_crate}: {runtime_place})"),
        None => runtime_place.to_string(),
    };
    Some((message, Some(location)))
}

/// What Rust's panic hook prints under `RUST_BACKTRACE=1` before the frames.
const RUST_BACKTRACE_HEADER: &str = "stack backtrace:";

/// A place in the Rust standard library (`/rustc/<commit>/library/std/...`,
/// or `library/core/...` from toolchains built without remapping), shortened
/// to `library/...`; `None` for the user's own code.
fn rust_runtime_place(location: &str) -> Option<&str> {
    if let Some(rest) = location.strip_prefix("/rustc/") {
        let (_commit, path) = rest.split_once('/')?;
        return path.starts_with("library/").then_some(path);
    }
    let runtime_crates = ["library/std/", "library/core/", "library/alloc/", "library/panic_abort/", "library/panic_unwind/"];
    runtime_crates.iter().any(|c| location.starts_with(c)).then_some(location)
}

/// A function name as Rust writes it (`rust_basic::pid`), without the hash;
/// names that are not Rust symbols come back unchanged.
pub fn demangle(name: &str) -> String {
    format!("{:#}", rustc_demangle::demangle(name))
}

/// Frames of the panic machinery, the standard library and wasi-libc's
/// start-up code: skipped when looking for the user's frame.
fn is_rust_runtime_frame(name: &str) -> bool {
    let trimmed = name.trim_start_matches('<').trim_start_matches('&');
    let prefixes = ["std::", "core::", "alloc::", "panic_abort::", "panic_unwind::", "__rust", "rust_begin_unwind", "rust_panic", "__wasi", "__wasm_call_ctors", "__main_void", "__original_main", "_start", "abort", "wasm-function["];
    name.is_empty() || prefixes.iter().any(|p| trimmed.starts_with(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(s: &str) -> Vec<String> {
        s.lines().map(str::to_string).collect()
    }

    #[test]
    fn go_panics_name_the_first_user_frame() {
        let err = lines("panic: the ledger is corrupt at entry 12\n\ngoroutine 1 [running]:\nmain.explode(0xc)\n\tseedfall.dev/g/main.go:160 +0x4\nmain.main()\n\tseedfall.dev/g/main.go:36 +0x9");
        assert_eq!(go_panic(&err), Some(("the ledger is corrupt at entry 12".into(), Some("seedfall.dev/g/main.go:160".into()))));
    }

    #[test]
    fn go_runtime_frames_are_skipped() {
        let err = lines("panic: runtime error: index out of range [5] with length 3\n\ngoroutine 1 [running]:\nruntime.panicIndex()\n\truntime/panic.go:115\nmain.main()\n\tex.com/m/main.go:9 +0x2");
        assert_eq!(go_panic(&err).unwrap().1.as_deref(), Some("ex.com/m/main.go:9"));
    }

    #[test]
    fn rust_panics_give_message_and_place() {
        let err = lines("thread 'main' panicked at src/main.rs:22:17:\nbalance went negative: -3\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace");
        assert_eq!(rust_panic(&err, &[]), Some(("balance went negative: -3".into(), Some("src/main.rs:22".into()))));
    }

    #[test]
    fn rust_backtrace_header_stays_out_of_the_message() {
        let err = lines("thread 'main' (1) panicked at src/main.rs:22:17:\nbalance went negative: -3\nstack backtrace:\nnote: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.");
        assert_eq!(rust_panic(&err, &[]), Some(("balance went negative: -3".into(), Some("src/main.rs:22".into()))));
    }

    #[test]
    fn rust_panics_in_std_name_the_first_user_frame() {
        let err = lines("thread 'main' (1) panicked at /rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/sys/pal/wasi/os.rs:106:5:\nunsupported\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace");
        let frames: Vec<String> = ["abort", "_ZN3std3sys9backtrace26__rust_end_short_backtrace17h0123456789abcdefE", "_ZN4core9panicking9panic_fmt17h0123456789abcdefE", "_ZN3std7process2id17h0123456789abcdefE", "_ZN10rust_basic3pid17h0123456789abcdefE", "_ZN10rust_basic4main17h0123456789abcdefE"]
            .map(String::from)
            .to_vec();
        let want = "rust_basic::pid (std: library/std/src/sys/pal/wasi/os.rs:106)";
        assert_eq!(rust_panic(&err, &frames).unwrap().1.as_deref(), Some(want));
        // Without frames (no trap to read them from), the place is still shortened.
        assert_eq!(rust_panic(&err, &[]).unwrap().1.as_deref(), Some("library/std/src/sys/pal/wasi/os.rs:106"));
    }
}
