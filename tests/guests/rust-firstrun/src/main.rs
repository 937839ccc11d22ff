//! A plain Rust program that fails the way real programs fail on their
//! first run under seedfall (server/cli/tests/first_hour.rs).
fn main() {
    match std::env::args().nth(1).as_deref() {
        // wasm32-wasip1 has no threads.
        Some("thread") => {
            let worker = std::thread::spawn(|| 1 + 1);
            println!("{}", worker.join().unwrap());
        }
        // A log in a folder the disk does not have; the error, as Rust's
        // Debug prints it, names no path.
        Some("acks") => {
            let f = std::fs::OpenOptions::new().create(true).append(true).open("/var/lib/acks/log");
            if let Err(e) = f {
                eprintln!("acks: {e:?}");
                std::process::exit(1);
            }
        }
        other => {
            eprintln!("unknown mode {other:?}");
            std::process::exit(2);
        }
    }
}
