//! A plain Rust program that fails the way real programs fail on their
//! first run under seedfall (server/cli/tests/first_hour.rs).
fn main() {
    match std::env::args().nth(1).as_deref() {
        // wasm32-wasip1 has no threads.
        Some("thread") => {
            let worker = std::thread::spawn(|| 1 + 1);
            println!("{}", worker.join().unwrap());
        }
        other => {
            eprintln!("unknown mode {other:?}");
            std::process::exit(2);
        }
    }
}
