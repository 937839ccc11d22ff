//! panic: a spawned thread panics while the main thread waits to join it.
//! On wasm32-wasip1-threads a panic aborts the process (panic=abort): the
//! failure must name the panic's message and line, whichever thread it was.
fn main() {
    let worker = std::thread::spawn(|| {
        let shared = std::sync::Mutex::new(3u32);
        let left = *shared.lock().unwrap();
        if left < 5 {
            panic!("the worker gave up with {left} left");
        }
    });
    let _ = worker.join();
    println!("unreachable: the process aborted with the worker's panic");
}
