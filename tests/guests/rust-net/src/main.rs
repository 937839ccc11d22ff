//! rust-net: a test guest for the engine's sockets. An ordinary Rust program
//! (no threads) that talks TCP through the `wasmedge_wasi_socket` crate, the
//! way a WasmEdge program would; it does not know it is simulated.
//!
//! Modes (the first argument):
//!   server  --port P                          echo server, one connection at a time
//!   client  --to HOST:PORT --conns N --bytes B  N sequential echo round trips
//!   refused --to HOST:PORT                    expects the connect to be refused
use std::io::{ErrorKind, Read, Write};
use std::process::exit;
use std::time::Duration;
use wasmedge_wasi_socket::{Shutdown, TcpListener, TcpStream};

/// One stderr line, written whole (stderr is unbuffered, and `eprintln!`
/// would hand the host one write per formatted piece).
macro_rules! err {
    ($($arg:tt)*) => {{
        let line = format!("{}\n", format_args!($($arg)*));
        let _ = std::io::stderr().write_all(line.as_bytes());
    }};
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(mode) = args.first() else {
        usage("no mode given");
    };
    let flags = parse_flags(&args[1..]);
    match mode.as_str() {
        "server" => server(number(&flags, "--port")),
        "client" => client(
            &required(&flags, "--to"),
            number(&flags, "--conns"),
            number(&flags, "--bytes"),
        ),
        "refused" => refused(&required(&flags, "--to")),
        "read-timeout" => read_timeout(&required(&flags, "--to"), number(&flags, "--ms")),
        other => usage(&format!("unknown mode {other}")),
    }
}

fn usage(why: &str) -> ! {
    err!("rust-net: {why}");
    err!("usage: rust-net server --port P");
    err!("       rust-net client --to HOST:PORT --conns N --bytes B");
    err!("       rust-net refused --to HOST:PORT");
    exit(2);
}

/// `--flag value` pairs, in order.
fn parse_flags(rest: &[String]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut it = rest.iter();
    while let Some(flag) = it.next() {
        if !flag.starts_with("--") {
            usage(&format!("expected a --flag, got {flag}"));
        }
        let Some(value) = it.next() else {
            usage(&format!("{flag} needs a value"));
        };
        out.push((flag.clone(), value.clone()));
    }
    out
}

fn required(flags: &[(String, String)], name: &str) -> String {
    match flags.iter().rev().find(|(f, _)| f == name) {
        Some((_, v)) => v.clone(),
        None => usage(&format!("missing {name}")),
    }
}

fn number<T: std::str::FromStr>(flags: &[(String, String)], name: &str) -> T {
    let v = required(flags, name);
    v.parse()
        .unwrap_or_else(|_| usage(&format!("{name} must be a number, got {v}")))
}

/// Byte `j` of connection `i`'s message.
fn pattern(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| ((i * 31 + j * 7) % 251) as u8).collect()
}

fn server(port: u16) -> ! {
    let listener = match TcpListener::bind(format!("0.0.0.0:{port}"), false) {
        Ok(l) => l,
        Err(e) => {
            err!("echo server: listen on port {port} failed: {e}");
            exit(1);
        }
    };
    println!("echo server listening on {port}");
    let mut failures_in_a_row = 0u32;
    loop {
        let (stream, peer) = match listener.accept(false) {
            Ok(conn) => {
                failures_in_a_row = 0;
                conn
            }
            Err(e) => {
                err!("echo server: accept failed: {e}");
                failures_in_a_row += 1;
                if failures_in_a_row >= 100 {
                    err!("echo server: giving up after {failures_in_a_row} failed accepts");
                    exit(1);
                }
                continue;
            }
        };
        match echo(stream) {
            Ok(n) => println!("served {n} bytes"),
            Err((n, e)) => err!("echo server: connection from {peer} failed after {n} bytes: {e}"),
        }
    }
}

/// Echoes until the peer's EOF; the stream is shut down and closed when dropped.
fn echo(mut stream: TcpStream) -> Result<u64, (u64, std::io::Error)> {
    let mut buf = [0u8; 4096];
    let mut total = 0u64;
    loop {
        let n = match stream.read(&mut buf) {
            Ok(0) => return Ok(total),
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err((total, e)),
        };
        stream.write_all(&buf[..n]).map_err(|e| (total, e))?;
        total += n as u64;
    }
}

fn connect_with_retry(to: &str) -> TcpStream {
    const ATTEMPTS: u32 = 50;
    let mut attempt = 1;
    loop {
        match TcpStream::connect(to) {
            Ok(s) => return s,
            Err(e) if e.kind() == ErrorKind::ConnectionRefused && attempt < ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => {
                err!(
                    "client: connect to {to} failed (attempt {attempt}): {e} ({:?})",
                    e.kind()
                );
                exit(1);
            }
        }
    }
}

fn client(to: &str, conns: usize, bytes: usize) -> ! {
    for i in 0..conns {
        let sent = pattern(i, bytes);
        let mut stream = connect_with_retry(to);
        if let Err(e) = stream.write_all(&sent) {
            err!("client: conn {i}: write of {bytes} bytes failed: {e}");
            exit(1);
        }
        if let Err(e) = stream.shutdown(Shutdown::Write) {
            err!("client: conn {i}: shutdown(write) failed: {e}");
            exit(1);
        }
        let mut got = Vec::with_capacity(bytes);
        if let Err(e) = stream.read_to_end(&mut got) {
            err!(
                "client: conn {i}: read failed after {} bytes: {e}",
                got.len()
            );
            exit(1);
        }
        if got != sent {
            let first_diff = sent.iter().zip(&got).position(|(a, b)| a != b);
            match first_diff {
                Some(j) => err!(
                    "client: conn {i}: echo mismatch at byte {j}: sent {:#04x}, got {:#04x} (sent {} bytes, got {})",
                    sent[j],
                    got[j],
                    sent.len(),
                    got.len()
                ),
                None => err!(
                    "client: conn {i}: echo length mismatch: sent {} bytes, got {}",
                    sent.len(),
                    got.len()
                ),
            }
            exit(1);
        }
        drop(stream);
    }
    println!("client ok conns={conns} bytes={bytes}");
    exit(0);
}

fn refused(to: &str) -> ! {
    match TcpStream::connect(to) {
        Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
            println!("refused ok: {:?}", e.kind());
            exit(0);
        }
        Err(e) => {
            println!(
                "refused: expected ConnectionRefused, got {:?}: {e}",
                e.kind()
            );
            exit(1);
        }
        Ok(s) => {
            let peer = s
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_else(|e| format!("? ({e})"));
            println!("refused: expected ConnectionRefused, but connected to {peer}");
            exit(1);
        }
    }
}

/// Connects, asks for nothing, and reads with SO_RCVTIMEO set: the read must
/// give up with WouldBlock or TimedOut (as on Linux), not wait for ever.
fn read_timeout(to: &str, ms: u64) -> ! {
    let mut stream = connect_with_retry(to);
    let timeout = std::time::Duration::from_millis(ms);
    if let Err(e) = stream.as_mut().set_recv_timeout(Some(timeout)) {
        println!("read-timeout: set_recv_timeout failed: {e}");
        exit(1);
    }
    match stream.as_mut().get_recv_timeout() {
        Ok(Some(t)) if t == timeout => {}
        other => {
            println!("read-timeout: get_recv_timeout gave {other:?}, expected {timeout:?}");
            exit(1);
        }
    }
    println!("connected; reading with a {ms}ms timeout");
    let mut buf = [0u8; 16];
    match stream.read(&mut buf) {
        Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
            println!("read timeout ok: {:?}", e.kind());
            exit(0);
        }
        other => {
            println!("read-timeout: expected a timeout, got {other:?}");
            exit(1);
        }
    }
}
