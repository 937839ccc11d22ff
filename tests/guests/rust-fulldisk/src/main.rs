//! rust-fulldisk: go-fulldisk's durable append-only log with Rust's std::fs,
//! to exercise seedfall's full-disk and write-error faults (a small
//! disk.capacity, write_error, disk_full).
//!
//! `handle` copes with them: on ENOSPC, a short write or EIO it cuts the
//! segment back to its last good record, frees the oldest segment when the
//! disk is full, and retries the same record. `ignore` is the same log written
//! carelessly, one `write` whose count and error are dropped, so a full disk
//! leaves an acked record short or missing, and the periodic check (or the
//! next start's recovery) panics naming it.
//! Usage: rust-fulldisk handle|ignore [dir, default /data]
use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Seek, SeekFrom, Write};
use std::thread::sleep;
use std::time::Duration;

const SEG_MAX: u64 = 16 << 10;
const MAX_REC: usize = 8 + 499; // the longest record: what one torn append can leave
const TOTAL: u64 = 400;
const MAX_FAIL: u32 = 1000;
// EIO has no io::ErrorKind (ENOSPC is StorageFull), and WASI numbers it
// differently from Linux.
#[cfg(target_os = "wasi")]
const EIO: i32 = 29;
#[cfg(not(target_os = "wasi"))]
const EIO: i32 = 5;

fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 { (crc >> 1) ^ 0xEDB8_8320 } else { crc >> 1 };
        }
    }
    !crc
}

fn payload(n: u64) -> Vec<u8> {
    // Wrapping, as in go-fulldisk: parse calls this with whatever a torn record holds.
    let mut p: Vec<u8> = (0..100 + n.wrapping_mul(37) % 400).map(|i| (n.wrapping_mul(31).wrapping_add(i) % 251) as u8).collect();
    p[..8].copy_from_slice(&n.to_le_bytes()); // so recovery knows where to go on
    p
}

fn record(n: u64) -> Vec<u8> {
    let p = payload(n);
    let mut r = (p.len() as u32).to_le_bytes().to_vec();
    r.extend_from_slice(&crc32(&p).to_le_bytes());
    r.extend_from_slice(&p);
    r
}

/// The record at the start of `b`, if it is whole and intact: (number, size).
/// A record follows from its number, so a fresh copy checks length, CRC and bytes.
fn parse(b: &[u8]) -> Option<(u64, usize)> {
    let n = u64::from_le_bytes(b.get(8..16)?.try_into().ok()?);
    let r = record(n);
    b.starts_with(&r).then_some((n, r.len()))
}

fn seg_name(k: u32) -> String {
    format!("seg-{k:06}")
}

fn sync_dir(p: &str) -> io::Result<()> {
    File::open(p)?.sync_all()
}

struct Log {
    dir: String,
    segs: Vec<u32>,         // segment numbers on disk, oldest first
    cur: Option<File>,      // the last segment, None before the first exists
    end: u64,               // end of cur's last good record
    tail_dirty: bool,       // a cut back failed: cur may hold bytes past end
    acked: Vec<(u64, u32)>, // (record, segment) acked by this process, not retired
}

impl Log {
    fn path(&self, k: u32) -> String {
        format!("{}/{}", self.dir, seg_name(k))
    }

    /// Reads every segment and panics on corruption. Only the tail of the last
    /// segment may be bad, and only as much of it as one unsynced append.
    /// Returns the records found (with their segment), the segments, and the
    /// end of the last segment's last good record.
    fn scan(&self) -> (Vec<(u64, u32)>, Vec<u32>, u64) {
        let entries = fs::read_dir(&self.dir).unwrap_or_else(|e| panic!("list {}: {e}", self.dir));
        let mut ks: Vec<u32> = entries
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("seg-")?.parse().ok())
            .collect();
        ks.sort();
        let (mut found, mut prev, mut last_end) = (Vec::new(), 0, 0);
        for (i, &k) in ks.iter().enumerate() {
            let data = fs::read(self.path(k)).unwrap_or_else(|e| panic!("read {}: {e}", seg_name(k)));
            let mut off = 0;
            while off < data.len() {
                let Some((n, size)) = parse(&data[off..]) else {
                    if i == ks.len() - 1 && data.len() - off <= MAX_REC {
                        break;
                    }
                    let which = if prev > 0 { format!("record {}", prev + 1) } else { "first record".into() };
                    panic!("{which} in {} is corrupt (offset {off} of {})", seg_name(k), data.len());
                };
                found.push((n, k));
                (prev, off) = (n, off + size);
            }
            last_end = off as u64;
        }
        (found, ks, last_end)
    }

    fn verify(&self) {
        let found: BTreeSet<u64> = self.scan().0.into_iter().map(|(n, _)| n).collect();
        for &(n, k) in &self.acked {
            if !found.contains(&n) {
                panic!("acked record {n} missing from {}", seg_name(k));
            }
        }
    }

    /// Drops what a failed append left past the last good record, and makes
    /// that durable so the space counts as free again. If it fails, the next
    /// attempt to append tries it again first.
    fn cut_back(&mut self) -> io::Result<()> {
        let f = self.cur.as_ref().expect("a segment to cut");
        let r = f.set_len(self.end).and_then(|_| f.sync_all());
        self.tail_dirty = r.is_err();
        r
    }

    fn create_next(&mut self) -> io::Result<File> {
        let k = self.segs.last().map_or(1, |k| k + 1);
        let f = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(self.path(k))?;
        sync_dir(&self.dir)?;
        self.segs.push(k);
        self.end = 0;
        Ok(f)
    }

    fn try_append(&mut self, rec: &[u8]) -> io::Result<()> {
        if self.tail_dirty {
            self.cut_back()?;
        }
        if self.cur.is_none() || self.end + rec.len() as u64 > SEG_MAX {
            self.cur = Some(self.create_next()?);
        }
        let f = self.cur.as_mut().unwrap();
        f.seek(SeekFrom::Start(self.end))?;
        if f.write(rec)? < rec.len() {
            return Err(ErrorKind::StorageFull.into()); // a short write: the disk is full
        }
        f.sync_all()?; // on failure the dirty pages are gone: write the record again
        self.end += rec.len() as u64;
        Ok(())
    }

    /// Frees the oldest segment; the caller makes sure it is not cur.
    fn retire(&mut self) {
        let k = self.segs[0];
        if fs::remove_file(self.path(k)).is_err_and(|e| e.kind() != ErrorKind::NotFound) {
            return; // the next attempt fails again and retries this
        }
        self.segs.remove(0);
        self.acked.retain(|&(_, s)| s != k);
        println!("retired seg {k}");
        // Removed space is free only once the removal is durable.
        if sync_dir(&self.dir).is_ok() {
            println!("freed");
        }
    }

    fn append_handled(&mut self, rec: &[u8]) {
        for fails in 0.. {
            if fails == MAX_FAIL {
                println!("giving up");
                std::process::exit(0);
            }
            let Err(e) = self.try_append(rec) else { return };
            if self.cur.is_some() {
                let _ = self.cut_back();
            }
            if e.raw_os_error() == Some(EIO) {
                println!("write error EIO, retrying");
                sleep(Duration::from_millis(1));
            } else if e.kind() == ErrorKind::StorageFull {
                if self.segs.len() < 2 {
                    sleep(Duration::from_millis(5)); // nothing to free: wait for space
                } else {
                    self.retire();
                }
            } else {
                println!("write error {e}, retrying");
                sleep(Duration::from_millis(1));
            }
        }
    }

    /// The bug under test: nothing it does is checked.
    fn append_careless(&mut self, rec: &[u8]) {
        if self.cur.is_none() || self.end + rec.len() as u64 > SEG_MAX {
            let k = self.segs.last().map_or(1, |k| k + 1);
            self.cur = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(self.path(k)).ok();
            let _ = sync_dir(&self.dir);
            self.segs.push(k);
            self.end = 0;
        }
        if let Some(f) = self.cur.as_mut() {
            let _ = f.write(rec);
            let _ = f.sync_all();
        }
        self.end += rec.len() as u64;
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let handle = match args.get(1).map(String::as_str) {
        Some("handle") => true,
        Some("ignore") => false,
        other => panic!("usage: rust-fulldisk handle|ignore [dir], not {other:?}"),
    };
    let dir = args.get(2).cloned().unwrap_or_else(|| "/data".into());
    // Setting up is not under test: wait out a full disk here in both modes.
    let parent = std::path::Path::new(&dir).parent().and_then(|p| p.to_str()).filter(|p| !p.is_empty()).unwrap_or("/");
    while fs::create_dir_all(&dir).and_then(|_| sync_dir(parent)).is_err() {
        sleep(Duration::from_millis(5));
    }

    let mut log = Log { dir, segs: Vec::new(), cur: None, end: 0, tail_dirty: false, acked: Vec::new() };
    let (found, segs, last_end) = log.scan();
    let next = found.iter().map(|&(n, _)| n + 1).max().unwrap_or(1);
    if let Some(&k) = segs.last() {
        let f = OpenOptions::new().read(true).write(true).open(log.path(k)).unwrap_or_else(|e| panic!("open {}: {e}", seg_name(k)));
        // A torn tail after a crash is normal; cut it so appends follow good data.
        (log.cur, log.end) = (Some(f), last_end);
        let _ = log.cut_back();
        let _ = log.cur.as_mut().unwrap().seek(SeekFrom::Start(last_end));
    }
    log.segs = segs;
    println!("recovered {} records, next {next}", found.len());

    for n in next..next + TOTAL {
        let rec = record(n);
        if handle {
            log.append_handled(&rec);
        } else {
            log.append_careless(&rec);
        }
        log.acked.push((n, *log.segs.last().unwrap()));
        println!("acked {n}");
        if (n - next + 1) % 25 == 0 {
            log.verify();
        }
        sleep(Duration::from_millis(1));
    }
}
