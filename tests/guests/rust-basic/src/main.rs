//! rust-basic: a test guest for the engine. An ordinary std Rust program
//! (no threads) that reads the clocks, sleeps, draws randomness through
//! `getrandom` and `HashMap`'s seed, and uses `std::fs`; it can also be told
//! to panic or trap so the engine's verdicts are tested on real Rust.
use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "work".to_string());
    match mode.as_str() {
        "work" => {
            work();
        }
        "panic-sometimes" => {
            let r = work();
            if r % 4 == 0 {
                panic!("balance went negative: {}", -(r as i64 % 100));
            }
        }
        "std-panic" => {
            // A panic inside the standard library: wasip1 has no process
            // ids, so std panics in its own source, called from here.
            println!("pid {}", pid());
        }
        "rare" => {
            // A function only some runs reach, for explore's "new functions".
            for _ in 0..6 {
                std::thread::sleep(Duration::from_millis(1));
                if random_u64() % 16 == 0 {
                    rare_path();
                }
            }
        }
        "trap" => {
            println!("about to trap");
            std::process::abort();
        }
        "exit7" => std::process::exit(7),
        "symlink" => {
            // The simulated disk has no symlinks: the host answers ENOTSUP.
            for _ in 0..2 {
                let (old, new) = ("a", "b");
                // SAFETY: pointers and lengths of live strings; fd 3 is the preopen.
                let errno = unsafe { path_symlink(old.as_ptr(), old.len(), 3, new.as_ptr(), new.len()) };
                match errno {
                    0 => println!("symlink made"),
                    e => println!("symlink failed: errno {e}"),
                }
            }
        }
        other => {
            eprintln!("unknown mode {other}");
            std::process::exit(2);
        }
    }
}

#[inline(never)]
fn rare_path() {
    println!("took the rare path");
}

#[inline(never)]
fn pid() -> u32 {
    std::process::id()
}

fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    getrandom::getrandom(&mut buf).expect("getrandom");
    u64::from_le_bytes(buf)
}

fn work() -> u64 {
    let start = Instant::now();
    let epoch = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
    println!("realtime starts at {epoch}");
    let r = random_u64();
    println!("random {r:016x}");
    for i in 0..3 {
        let ms = 1 + (random_u64() % 15);
        std::thread::sleep(Duration::from_millis(ms));
        println!("slept {ms}ms (step {i}), elapsed {:?}", start.elapsed().as_millis());
    }
    // HashMap iteration order comes from random_get: it must replay too.
    let map: HashMap<&str, i32> = [("a", 1), ("b", 2), ("c", 3), ("d", 4)].into_iter().collect();
    let keys: Vec<_> = map.keys().copied().collect();
    println!("map order {}", keys.join(""));

    fs::create_dir_all("/state").unwrap();
    let mut f = fs::File::create("/state/counter").unwrap();
    writeln!(f, "{}", r % 1000).unwrap();
    f.sync_all().unwrap();
    drop(f);
    let back = fs::read_to_string("/state/counter").unwrap();
    println!("read back {}", back.trim());
    for e in fs::read_dir("/state").unwrap() {
        let e = e.unwrap();
        println!("dir entry {:?} {} bytes", e.file_name(), e.metadata().unwrap().len());
    }
    r
}

#[link(wasm_import_module = "wasi_snapshot_preview1")]
extern "C" {
    fn path_symlink(old: *const u8, old_len: usize, fd: i32, new: *const u8, new_len: usize) -> i32;
}
