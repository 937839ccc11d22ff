//! rust-hostile: a guest that attacks its host, one mode per attack. The
//! suite (server/cli/tests/hostile.rs) runs each mode and asserts a clean
//! failure with bounded host memory and wall time.
//!
//! `table.grow` has no stable Rust spelling: that attack is a WAT module in
//! the suite itself.
use std::io::Write;

#[link(wasm_import_module = "wasi_snapshot_preview1")]
extern "C" {
    fn poll_oneoff(subs: *const u8, events: *mut u8, nsubs: u32, nevents: *mut u32) -> u16;
}

/// Writes 1 MiB blocks to a file with an fsync after each, forever: the disk
/// fills until the run's memory limit (or the disk's bound) stops it.
fn big_file() {
    let mut f = std::fs::File::create("/big").expect("create /big");
    let block = vec![0xabu8; 1 << 20];
    for i in 0u64.. {
        if let Err(e) = f.write_all(&block) {
            println!("write {i} failed: {e}");
            return;
        }
        f.sync_data().expect("fsync");
    }
}

/// Allocates and touches 1 MiB blocks forever.
fn grow() {
    let mut blocks: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut b = vec![0u8; 1 << 20];
        b[4096] = blocks.len() as u8;
        blocks.push(b);
    }
}

/// Asks for 4 GiB more memory, forever: every grow fails, and costs the
/// host more than the one instruction wasm counts for it.
fn fail_grow() {
    let mut failed = 0u64;
    loop {
        if core::arch::wasm32::memory_grow(0, 65536) == usize::MAX {
            failed += 1;
        }
        if failed == u64::MAX {
            break;
        }
    }
}

/// poll_oneoff with the most subscriptions the host takes (clocks that are
/// due at once: it never blocks), forever.
fn poll_storm() {
    const N: usize = 4096;
    let mut subs = vec![0u8; N * 48];
    for i in 0..N {
        let s = &mut subs[i * 48..(i + 1) * 48];
        s[0..8].copy_from_slice(&(i as u64).to_le_bytes());
        s[8] = 0; // clock
        s[16..20].copy_from_slice(&1u32.to_le_bytes()); // monotonic
        // timeout 0, relative: due now
    }
    let mut events = vec![0u8; N * 32];
    let mut n = 0u32;
    loop {
        let e = unsafe { poll_oneoff(subs.as_ptr(), events.as_mut_ptr(), N as u32, &mut n) };
        assert_eq!(e, 0, "poll_oneoff failed");
    }
}

/// One 1 GiB line on stdout, then a panic (so the run leaves a failure
/// folder). Straight to fd 1: std's line buffering would scan every byte
/// for a newline in wasm, which the watchdog rightly counts.
fn big_line() {
    use std::os::fd::FromRawFd;
    let chunk = vec![b'x'; 1 << 20];
    let mut out = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });
    for _ in 0..1024 {
        out.write_all(&chunk).unwrap();
    }
    panic!("after a 1 GiB line");
}

/// Tries to reach the host's files and environment.
fn escape() {
    for p in ["/etc/passwd", "../../../../etc/passwd", "/proc/self/environ", "/../etc/hostname", "./../../root"] {
        match std::fs::read(p) {
            Ok(b) => println!("escape {p}: read {} bytes", b.len()),
            Err(e) => println!("escape {p}: {}", e.kind()),
        }
    }
    let keys: Vec<String> = std::env::vars().map(|(k, _)| k).collect();
    println!("env keys: {}", keys.join(","));
    println!("HOME={:?} PATH={:?}", std::env::var("HOME").ok(), std::env::var("PATH").ok());
}

/// Prints its environment as the host gave it (the suite spoofs SEEDFALL_NODE).
fn env() {
    for (k, v) in std::env::vars() {
        println!("env {k}={v}");
    }
}

/// A failing property whose message carries control bytes and ANSI escapes.
fn control_bytes() {
    println!("\x1b[2J\x1b[31mred\x07 and a bell");
    seedfall::always!(false, "evil \x1b[2J\x1b[31mred\x07\r\n overwritten");
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    match mode.as_str() {
        "bigfile" => big_file(),
        "grow" => grow(),
        "failgrow" => fail_grow(),
        "poll" => poll_storm(),
        "bigline" => big_line(),
        "escape" => escape(),
        "env" => env(),
        "ctrl" => control_bytes(),
        other => panic!("unknown mode {other:?}"),
    }
}
