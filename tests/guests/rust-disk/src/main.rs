//! rust-disk: the same create / rename / fsync steps as go-disk's `steps`
//! mode, with Rust's std::fs. Step k runs at 20ms*k, so a crash at
//! 20ms*k+10ms lands after it; after the restart it prints what survived.
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::thread::sleep;
use std::time::{Duration, Instant};

fn sync_dir(p: &str) {
    File::open(p).unwrap().sync_all().unwrap();
}

fn write_file(p: &str, content: &str, sync: bool) {
    let mut f = File::create(p).unwrap();
    f.write_all(content.as_bytes()).unwrap();
    if sync {
        f.sync_all().unwrap();
    }
}

fn tree(dir: &str, out: &mut Vec<String>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    out.push(format!("{dir}/"));
    let mut names: Vec<String> = entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for n in names {
        let p = format!("{dir}/{n}");
        if fs::metadata(&p).map(|m| m.is_dir()).unwrap_or(false) {
            tree(&p, out);
        } else {
            out.push(format!("{p}={}", fs::read_to_string(&p).unwrap_or_default()));
        }
    }
}

fn main() {
    if fs::metadata("/marker").is_ok() {
        let mut out = Vec::new();
        tree("/d", &mut out);
        out.sort();
        println!("survived: {}", if out.is_empty() { "(none)".to_string() } else { out.join(" ") });
        return;
    }
    write_file("/marker", "", true);
    sync_dir("/");
    let start = Instant::now();
    let step = |k: u32, f: &dyn Fn()| {
        let at = start + Duration::from_millis(20 * u64::from(k));
        if let Some(d) = at.checked_duration_since(Instant::now()) {
            sleep(d);
        }
        f();
        println!("step {k} done");
    };
    step(1, &|| {
        fs::create_dir("/d").unwrap();
        sync_dir("/");
    });
    step(2, &|| write_file("/d/a", "a1", true));
    step(3, &|| {
        write_file("/d/b.tmp", "b1", true);
        fs::rename("/d/b.tmp", "/d/b").unwrap();
    });
    step(4, &|| sync_dir("/d"));
    step(5, &|| {
        write_file("/d/c", "c1", false);
        fs::rename("/d/a", "/d/a2").unwrap();
    });
    step(6, &|| OpenOptions::new().read(true).write(true).open("/d/b").unwrap().sync_all().unwrap());
    step(7, &|| fs::remove_file("/d/b").unwrap());
    sleep(Duration::from_secs(3600));
}
