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

/// A Rust panic: `thread 'main' panicked at src/main.rs:22:17:` then the
/// message on the following lines (until the `note:` line).
/// Rust's allocator failing: `memory allocation of 1048576 bytes failed`
/// on stderr, then an abort (a wasm `unreachable`).
pub fn rust_oom(stderr: &[String]) -> Option<&str> {
    stderr.iter().rev().take(4).find(|l| l.starts_with("memory allocation of ") && l.ends_with(" failed")).map(String::as_str)
}

pub fn rust_panic(stderr: &[String]) -> Option<(String, Option<String>)> {
    let start = stderr.iter().rposition(|l| l.contains("panicked at "))?;
    let header = &stderr[start];
    let at = header.split("panicked at ").nth(1)?.trim_end_matches(':');
    // Old Rust put the message first: `panicked at 'msg', src/main.rs:1:2`.
    let (message, place) = if let Some(rest) = at.strip_prefix('\'') {
        let (msg, place) = rest.rsplit_once("', ")?;
        (msg.to_string(), place.to_string())
    } else {
        let msg: Vec<&str> = stderr[start + 1..].iter().take_while(|l| !l.starts_with("note: ")).map(String::as_str).collect();
        (msg.join("\n"), at.to_string())
    };
    // file:line:col -> file:line
    let location = match place.rsplitn(3, ':').collect::<Vec<_>>().as_slice() {
        [_col, line, file] => format!("{file}:{line}"),
        _ => place,
    };
    Some((message, Some(location)))
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
        assert_eq!(rust_panic(&err), Some(("balance went negative: -3".into(), Some("src/main.rs:22".into()))));
    }
}
