//! Errors that teach: what a failure on a first run of a real program most
//! likely means, and what to do about it. Each hint is matched on the
//! failure's message and the node's last lines on stderr, says what
//! happened in seedfall's terms, and points at the docs section
//! (docs/getting-started.md#when-the-first-run-fails).
//!
//! A missing folder has its own hint (`scheduler::missing_dir_hint`): it
//! knows which folder.
use crate::failure::FailureKind;

const DOCS: &str = "docs/getting-started.md#when-the-first-run-fails";

/// The hint for a failure of `kind` with `message`, given the node's last
/// stderr lines and the host calls it made that seedfall does not provide.
pub fn hint(kind: FailureKind, message: &str, stderr: &[&str], unsupported: &[String]) -> Option<String> {
    let said = |needle: &str| message.contains(needle) || stderr.iter().any(|l| l.contains(needle));
    let said_any = |needles: &[&str]| needles.iter().any(|n| said(n));
    if said("all goroutines are asleep - deadlock") {
        return Some(format!("every goroutine of the node was waiting (on a channel, a lock, a read) with nothing left that could wake it, so Go stopped it: seedfall replay shows what it did last ({DOCS})"));
    }
    if said_any(&["connection refused", "Connection refused", "ECONNREFUSED"]) {
        return Some(format!("nothing was listening at that address: every node starts at t=0, so a client that connects before its server listens (or while it is down after a crash) is refused; retry until the server answers ({DOCS})"));
    }
    if said_any(&["no such host", "failed to lookup address", "Name or service not known", "dial tcp: lookup ", "dial udp: lookup "]) {
        return Some(format!("a name that is not a node instance: the hosts of the simulated network are the config's instance names (server, client#2), and localhost is the node itself ({DOCS})"));
    }
    if said_any(&["write udp ", "dial udp ", "read udp ", "listen udp "]) {
        return Some(format!("datagram (UDP) sockets are not simulated, only TCP streams are (docs/network.md); a program that needs UDP (DNS lookups to a server, QUIC) cannot run its UDP part here ({DOCS})"));
    }
    // A spawn refused for want of room (EAGAIN: `WouldBlock`) comes from a
    // build that has threads, so it is not this hint's.
    let refused_for_room = said_any(&["WouldBlock", "Resource temporarily unavailable"]);
    if !refused_for_room && (said_any(&["failed to spawn thread", "thread::spawn", "can't spawn"]) || (said("operation not supported on this platform") && said("thread"))) {
        return Some("wasm32-wasip1 has no threads, so std::thread::spawn fails: build for wasm32-wasip1-threads with \"cargo\": {\"target\": \"wasm32-wasip1-threads\"} (docs/sdk-rust.md#threads)".into());
    }
    if !unsupported.is_empty() && (said_any(&["not supported", "unsupported", "not implemented", "ENOSYS", "ENOTSUP"]) || kind == FailureKind::Exit) {
        return Some(format!("it called {}, which seedfall does not provide (the call returned an error): what a guest may call is in docs/abi.md ({DOCS})", unsupported.join(", ")));
    }
    if kind == FailureKind::Exit {
        // The line that says what went wrong, else the last one.
        let errorish = |l: &&&str| ["error", "Error", "flag provided", "invalid", "cannot", "failed", "unknown"].iter().any(|w| l.contains(w));
        let line = stderr.iter().rev().find(errorish).or_else(|| stderr.iter().rev().find(|l| !l.trim().is_empty()));
        if let Some(line) = line {
            let line: String = line.trim().chars().take(LAST_LINE_CHARS_MAX).collect();
            return Some(format!("it said on stderr: {line} (a usage error is about the node's \"args\" in the config; {DOCS})"));
        }
    }
    None
}

/// Characters of a stderr line quoted in a hint.
const LAST_LINE_CHARS_MAX: usize = 300;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_first_run_failure_gets_its_hint() {
        let h = |kind, message: &str, stderr: &[&str]| hint(kind, message, stderr, &[]).unwrap_or_default();
        assert!(h(FailureKind::Exit, "exited with code 2", &["fatal error: all goroutines are asleep - deadlock!"]).contains("every goroutine"));
        assert!(h(FailureKind::Panic, "dial tcp 10.0.0.2:7000: connect: connection refused", &[]).contains("nothing was listening"));
        let threads = h(FailureKind::Panic, "failed to spawn thread: Error { kind: Unsupported }", &[]);
        assert!(threads.contains("no threads") && threads.contains(r#"build for wasm32-wasip1-threads with "cargo": {"target": "wasm32-wasip1-threads"} (docs/sdk-rust.md#threads)"#), "{threads}");
        assert!(!h(FailureKind::Panic, "failed to spawn thread: Os { code: 6, kind: WouldBlock, message: \"Resource temporarily unavailable\" }", &[]).contains("no threads"));
        assert!(h(FailureKind::Exit, "exited with code 2", &["flag provided but not defined: -prot", "Usage of kv:"]).contains("it said on stderr: flag provided but not defined: -prot"));
        assert!(hint(FailureKind::Exit, "exited with code 1", &[], &["sock_accept".into()]).unwrap().contains("it called sock_accept"));
        assert_eq!(hint(FailureKind::Property, "acknowledged writes survive crashes", &[], &[]), None);
    }
}
