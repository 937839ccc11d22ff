//! litmus: tiny crash-consistency workloads, one program for two worlds.
//!
//! Built natively, the oracle runs it on a real ext4, xfs or btrfs whose
//! block writes it records (tests/oracle); built for wasm32-wasip1, seedfall
//! runs the very same calls on its simulated disk. Comparing what survives a
//! crash in both is the conformance check of docs/disk.md.
//!
//! `litmus list` names every workload; `litmus setup NAME ROOT` makes the
//! tree the workload starts from (the oracle syncs it before recording;
//! seedfall seeds it durably at t=0); `litmus run NAME ROOT` runs it.
//!
//! The workloads follow the persistence properties of Pillai et al. (OSDI
//! 2014, Table 1) and CrashMonkey's seq-1 and seq-2 workloads (OSDI 2018).
//! Every byte written is a tag repeated, so a tree's digests say which
//! write survived.
use std::fs::{self, File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

type Step = fn(&Root);

struct Workload {
    name: &'static str,
    what: &'static str,
    setup: Step,
    run: Step,
}

/// The folder a workload runs in: the mount point natively, `/` in seedfall.
struct Root(PathBuf);

impl Root {
    fn p(&self, rel: &str) -> PathBuf {
        self.0.join(rel)
    }
}

fn bytes(tag: u8, len: usize) -> Vec<u8> {
    vec![tag; len]
}

fn check<T>(what: &str, r: std::io::Result<T>) -> T {
    r.unwrap_or_else(|e| {
        eprintln!("litmus: {what}: {e}");
        std::process::exit(3)
    })
}

/// A new file (truncating) holding `len` bytes of `tag`.
fn write_new(r: &Root, rel: &str, tag: u8, len: usize, sync: bool) {
    let mut f = check(rel, File::create(r.p(rel)));
    check(rel, f.write_all(&bytes(tag, len)));
    if sync {
        check(rel, f.sync_all());
    }
}

fn append(r: &Root, rel: &str, tag: u8, len: usize, sync: Sync) {
    let mut f = check(rel, OpenOptions::new().append(true).open(r.p(rel)));
    check(rel, f.write_all(&bytes(tag, len)));
    sync.apply(rel, &f);
}

fn overwrite(r: &Root, rel: &str, at: u64, tag: u8, len: usize, sync: Sync) {
    let mut f = check(rel, OpenOptions::new().write(true).open(r.p(rel)));
    check(rel, f.seek(SeekFrom::Start(at)));
    check(rel, f.write_all(&bytes(tag, len)));
    sync.apply(rel, &f);
}

fn set_len(r: &Root, rel: &str, len: u64, sync: Sync) {
    let f = check(rel, OpenOptions::new().write(true).open(r.p(rel)));
    check(rel, f.set_len(len));
    sync.apply(rel, &f);
}

fn fsync(r: &Root, rel: &str) {
    check(rel, check(rel, File::open(r.p(rel))).sync_all());
}

fn fdatasync(r: &Root, rel: &str) {
    check(rel, check(rel, File::open(r.p(rel))).sync_data());
}

fn fsync_dir(r: &Root, rel: &str) {
    fsync(r, rel)
}

fn rename(r: &Root, from: &str, to: &str) {
    check(from, fs::rename(r.p(from), r.p(to)));
}

fn unlink(r: &Root, rel: &str) {
    check(rel, fs::remove_file(r.p(rel)));
}

fn mkdir(r: &Root, rel: &str) {
    check(rel, fs::create_dir(r.p(rel)));
}

#[derive(Clone, Copy)]
enum Sync {
    No,
    Fsync,
    Fdatasync,
}

impl Sync {
    fn apply(self, rel: &str, f: &File) {
        match self {
            Sync::No => {}
            Sync::Fsync => check(rel, f.sync_all()),
            Sync::Fdatasync => check(rel, f.sync_data()),
        }
    }
}

/// Opens `rel` for appending with O_SYNC (`dsync`: O_DSYNC).
fn open_sync(r: &Root, rel: &str, dsync: bool) -> File {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flag = if dsync { libc::O_DSYNC } else { libc::O_SYNC };
        check(rel, OpenOptions::new().append(true).custom_flags(flag).open(r.p(rel)))
    }
    #[cfg(target_os = "wasi")]
    {
        wasi_raw::open_sync(&r.p(rel), dsync).unwrap_or_else(|e| {
            eprintln!("litmus: {rel}: path_open: errno {e}");
            std::process::exit(3)
        })
    }
}

/// posix_fallocate(fd, 0, len): the size grows to `len`.
fn allocate(f: &File, len: u64) {
    #[cfg(unix)]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain syscall on a descriptor we own.
        let e = unsafe { libc::posix_fallocate(f.as_raw_fd(), 0, len as libc::off_t) };
        if e != 0 {
            eprintln!("litmus: posix_fallocate: errno {e}");
            std::process::exit(3);
        }
    }
    #[cfg(target_os = "wasi")]
    {
        if let Err(e) = wasi_raw::allocate(f, len) {
            eprintln!("litmus: fd_allocate: errno {e}");
            std::process::exit(3);
        }
    }
}

/// The preview1 calls std does not offer on stable: open with FDFLAGS_SYNC
/// or FDFLAGS_DSYNC, and fd_allocate.
#[cfg(target_os = "wasi")]
mod wasi_raw {
    use std::fs::File;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::path::Path;

    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        fn path_open(fd: i32, dirflags: i32, path: *const u8, path_len: usize, oflags: i32, rights_base: i64, rights_inheriting: i64, fdflags: i32, opened: *mut i32) -> i32;
        fn fd_allocate(fd: i32, offset: i64, len: i64) -> i32;
    }

    /// The first preopen, which seedfall makes `/`.
    const PREOPEN_ROOT: i32 = 3;
    const FDFLAGS_APPEND: i32 = 1;
    const FDFLAGS_DSYNC: i32 = 2;
    const FDFLAGS_SYNC: i32 = 16;

    pub fn open_sync(path: &Path, dsync: bool) -> Result<File, i32> {
        let rel = path.to_str().unwrap().trim_start_matches('/');
        let mut fd = -1;
        let flags = FDFLAGS_APPEND | if dsync { FDFLAGS_DSYNC } else { FDFLAGS_SYNC };
        // SAFETY: the pointers are to live locals; the host checks them.
        let e = unsafe { path_open(PREOPEN_ROOT, 0, rel.as_ptr(), rel.len(), 0, -1, -1, flags, &mut fd) };
        if e != 0 {
            return Err(e);
        }
        // SAFETY: the host just handed us this descriptor.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    pub fn allocate(f: &File, len: u64) -> Result<(), i32> {
        // SAFETY: a plain host call on a descriptor we own.
        match unsafe { fd_allocate(f.as_raw_fd(), 0, len as i64) } {
            0 => Ok(()),
            e => Err(e),
        }
    }
}

fn nothing(_: &Root) {}

fn one_file(r: &Root) {
    write_new(r, "f", b'A', 8192, true);
}

fn small_file(r: &Root) {
    write_new(r, "f", b'A', 1000, true);
}

fn cur_and_log(r: &Root) {
    write_new(r, "cur", b'A', 100, true);
    write_new(r, "log", b'1', 2, true);
}

fn a_dir(r: &Root) {
    mkdir(r, "d");
    write_new(r, "d/f", b'A', 100, true);
}

const WORKLOADS: &[Workload] = &[
    // Directory entries: does a file's fsync make its name durable?
    Workload { name: "create_fsync", what: "create, write, fsync the file (no folder fsync)", setup: nothing, run: |r| write_new(r, "f", b'B', 3000, true) },
    Workload { name: "create_fsync_dir", what: "create, write, fsync the file and the folder", setup: nothing, run: |r| {
        write_new(r, "f", b'B', 3000, true);
        fsync_dir(r, ".");
    } },
    Workload { name: "create_nosync", what: "create and write, no sync", setup: nothing, run: |r| write_new(r, "f", b'B', 3000, false) },
    Workload { name: "create_empty_fsync", what: "create an empty file, fsync it", setup: nothing, run: |r| write_new(r, "f", b'B', 0, true) },
    // Replacing a file by rename.
    Workload { name: "rename_over_synced", what: "write tmp, fsync it, rename over an existing file (no folder fsync)", setup: cur_and_log, run: |r| {
        write_new(r, "cur.tmp", b'B', 3000, true);
        rename(r, "cur.tmp", "cur");
    } },
    Workload { name: "rename_over_unsynced", what: "write tmp, rename over an existing file without fsyncing tmp (auto_da_alloc)", setup: cur_and_log, run: |r| {
        write_new(r, "cur.tmp", b'B', 3000, false);
        rename(r, "cur.tmp", "cur");
        write_new(r, "other", b'C', 10, true);
    } },
    Workload { name: "rename_over_dirsync", what: "write tmp, fsync it, rename over, fsync the folder", setup: cur_and_log, run: |r| {
        write_new(r, "cur.tmp", b'B', 3000, true);
        rename(r, "cur.tmp", "cur");
        fsync_dir(r, ".");
    } },
    Workload { name: "rename_then_unsynced_append", what: "synced rename over a file (no folder fsync), then an unsynced append to another", setup: cur_and_log, run: |r| {
        write_new(r, "cur.tmp", b'B', 100, true);
        rename(r, "cur.tmp", "cur");
        append(r, "log", b'2', 2, Sync::No);
    } },
    Workload { name: "append_then_rename", what: "unsynced append, then rename the file, fsync the folder", setup: small_file, run: |r| {
        append(r, "f", b'B', 500, Sync::No);
        rename(r, "f", "g");
        fsync_dir(r, ".");
    } },
    Workload { name: "rename_fsync_new_name", what: "rename a synced file, fsync it by its new name", setup: small_file, run: |r| {
        rename(r, "f", "g");
        fsync(r, "g");
    } },
    // Appends.
    Workload { name: "append_sector", what: "append 200 bytes, fsync", setup: small_file, run: |r| append(r, "f", b'B', 200, Sync::Fsync) },
    Workload { name: "append_block", what: "append 4096 bytes, fsync", setup: small_file, run: |r| append(r, "f", b'B', 4096, Sync::Fsync) },
    Workload { name: "append_multiblock", what: "append 12288 bytes (three blocks), fsync", setup: small_file, run: |r| append(r, "f", b'B', 12288, Sync::Fsync) },
    Workload { name: "append_synced_then_unsynced", what: "a synced 3000-byte append, then an unsynced 300-byte append", setup: small_file, run: |r| {
        append(r, "f", b'B', 3000, Sync::Fsync);
        append(r, "f", b'C', 300, Sync::No);
    } },
    Workload { name: "append_unsynced_other_fsync", what: "an unsynced append, then another file created and fsynced", setup: small_file, run: |r| {
        append(r, "f", b'B', 3000, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "append_tail_unsynced_other_fsync", what: "an unsynced append inside the last block, then another file fsynced", setup: small_file, run: |r| {
        append(r, "f", b'B', 300, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    // Overwrites in place.
    Workload { name: "overwrite_sector", what: "overwrite 512 bytes in place, fsync", setup: one_file, run: |r| overwrite(r, "f", 1024, b'B', 512, Sync::Fsync) },
    Workload { name: "overwrite_block", what: "overwrite one aligned block in place, fsync", setup: one_file, run: |r| overwrite(r, "f", 4096, b'B', 4096, Sync::Fsync) },
    Workload { name: "overwrite_multiblock", what: "overwrite 8192 bytes across both blocks, fsync", setup: one_file, run: |r| overwrite(r, "f", 0, b'B', 8192, Sync::Fsync) },
    Workload { name: "overwrite_unsynced_other_fsync", what: "an unsynced overwrite, then another file created and fsynced", setup: one_file, run: |r| {
        overwrite(r, "f", 0, b'B', 4096, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    // Sizes.
    Workload { name: "truncate_down", what: "ftruncate down, fsync", setup: one_file, run: |r| set_len(r, "f", 3000, Sync::Fsync) },
    Workload { name: "truncate_down_other_fsync", what: "ftruncate down unsynced, then another file created and fsynced", setup: one_file, run: |r| {
        set_len(r, "f", 3000, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "truncate_up_write", what: "ftruncate up, write inside the new length, fsync", setup: small_file, run: |r| {
        set_len(r, "f", 20000, Sync::No);
        overwrite(r, "f", 15000, b'B', 100, Sync::Fsync);
    } },
    Workload { name: "truncate_up_other_fsync", what: "ftruncate up unsynced, then another file created and fsynced", setup: small_file, run: |r| {
        set_len(r, "f", 20000, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "otrunc_write_close", what: "O_TRUNC an existing file, write, close, then another file fsynced (auto_da_alloc)", setup: one_file, run: |r| {
        write_new(r, "f", b'B', 3000, false);
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "fallocate_fsync", what: "posix_fallocate past the end, fsync", setup: small_file, run: |r| {
        let f = check("f", OpenOptions::new().write(true).open(r.p("f")));
        allocate(&f, 16384);
        check("f", f.sync_all());
    } },
    // Preallocated space written across a block boundary, the way a
    // write-ahead log fills its segment (etcd's WAL: truncate or fallocate
    // up, append records; after a restart, ZeroToEnd: truncate down to the
    // last record and back up, unsynced, then append).
    Workload { name: "prealloc_truncate_write_across", what: "ftruncate up and fsync, a synced write inside, then an unsynced one across a block boundary, then another file fsynced", setup: small_file, run: |r| {
        set_len(r, "f", 65536, Sync::Fsync);
        overwrite(r, "f", 1000, b'B', 2000, Sync::Fsync);
        overwrite(r, "f", 3000, b'C', 3000, Sync::No);
        write_new(r, "g", b'D', 10, true);
    } },
    Workload { name: "fallocate_write_across", what: "posix_fallocate up and fsync, a synced write inside, then an unsynced one across a block boundary, then another file fsynced", setup: small_file, run: |r| {
        let f = check("f", OpenOptions::new().write(true).open(r.p("f")));
        allocate(&f, 65536);
        check("f", f.sync_all());
        overwrite(r, "f", 1000, b'B', 2000, Sync::Fsync);
        overwrite(r, "f", 3000, b'C', 3000, Sync::No);
        write_new(r, "g", b'D', 10, true);
    } },
    Workload { name: "zero_to_end_write_across", what: "ftruncate down into a block and back up unsynced, write across the next block boundary, then another file fsynced", setup: |r| write_new(r, "f", b'A', 8192, true), run: |r| {
        set_len(r, "f", 3000, Sync::No);
        set_len(r, "f", 8192, Sync::No);
        overwrite(r, "f", 3000, b'B', 3000, Sync::No);
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "zero_to_end_write_across_fsync", what: "ftruncate down into a block and back up unsynced, write across the next block boundary, fsync", setup: |r| write_new(r, "f", b'A', 8192, true), run: |r| {
        set_len(r, "f", 3000, Sync::No);
        set_len(r, "f", 8192, Sync::No);
        overwrite(r, "f", 3000, b'B', 3000, Sync::Fsync);
    } },
    // Unlinks and folders.
    Workload { name: "unlink_other_fsync", what: "unlink, then another file created and fsynced", setup: one_file, run: |r| {
        unlink(r, "f");
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "unlink_dirsync", what: "unlink, fsync the folder", setup: one_file, run: |r| {
        unlink(r, "f");
        fsync_dir(r, ".");
    } },
    Workload { name: "mkdir_chain_fsync_file", what: "mkdir a/b/c, create a file there, fsync only the file", setup: nothing, run: |r| {
        mkdir(r, "a");
        mkdir(r, "a/b");
        mkdir(r, "a/b/c");
        write_new(r, "a/b/c/f", b'B', 100, true);
    } },
    Workload { name: "mkdir_chain_fsync_dirs", what: "mkdir a/b/c, create a file, fsync it and every folder up", setup: nothing, run: |r| {
        mkdir(r, "a");
        mkdir(r, "a/b");
        mkdir(r, "a/b/c");
        write_new(r, "a/b/c/f", b'B', 100, true);
        fsync_dir(r, "a/b/c");
        fsync_dir(r, "a/b");
        fsync_dir(r, "a");
        fsync_dir(r, ".");
    } },
    Workload { name: "rmdir_other_fsync", what: "rmdir an empty folder, then another file created and fsynced", setup: |r| mkdir(r, "d"), run: |r| {
        check("d", fs::remove_dir(r.p("d")));
        write_new(r, "g", b'C', 10, true);
    } },
    Workload { name: "rename_dir_fsync", what: "rename a folder, fsync it by its new name", setup: a_dir, run: |r| {
        rename(r, "d", "e");
        fsync_dir(r, "e");
    } },
    // fdatasync against fsync.
    Workload { name: "fdatasync_append", what: "append 3000 bytes, fdatasync", setup: small_file, run: |r| append(r, "f", b'B', 3000, Sync::Fdatasync) },
    Workload { name: "fdatasync_overwrite_other_create", what: "create g unsynced, overwrite f in place, fdatasync f", setup: one_file, run: |r| {
        write_new(r, "g", b'C', 10, false);
        overwrite(r, "f", 0, b'B', 4096, Sync::Fdatasync);
    } },
    Workload { name: "fsync_overwrite_other_create", what: "create g unsynced, overwrite f in place, fsync f", setup: one_file, run: |r| {
        write_new(r, "g", b'C', 10, false);
        overwrite(r, "f", 0, b'B', 4096, Sync::Fsync);
    } },
    Workload { name: "fsync_unchanged_other_create", what: "create g unsynced, fsync f that did not change", setup: one_file, run: |r| {
        write_new(r, "g", b'C', 10, false);
        fsync(r, "f");
    } },
    Workload { name: "fsync_unchanged_dir", what: "rename inside d, fsync an unchanged folder e", setup: |r| {
        a_dir(r);
        mkdir(r, "e");
    }, run: |r| {
        rename(r, "d/f", "d/g");
        fsync_dir(r, "e");
    } },
    Workload { name: "fdatasync_truncate_up_other_create", what: "create g unsynced, ftruncate f up, fdatasync f", setup: small_file, run: |r| {
        write_new(r, "g", b'C', 10, false);
        set_len(r, "f", 20000, Sync::No);
        fdatasync(r, "f");
    } },
    // O_SYNC and O_DSYNC writes.
    Workload { name: "osync_appends", what: "two 3000-byte appends on an O_SYNC descriptor", setup: small_file, run: |r| {
        let mut f = open_sync(r, "f", false);
        check("f", f.write_all(&bytes(b'B', 3000)));
        check("f", f.write_all(&bytes(b'C', 3000)));
    } },
    Workload { name: "odsync_appends", what: "two 3000-byte appends on an O_DSYNC descriptor", setup: small_file, run: |r| {
        let mut f = open_sync(r, "f", true);
        check("f", f.write_all(&bytes(b'B', 3000)));
        check("f", f.write_all(&bytes(b'C', 3000)));
    } },
    // Two files, fsynced in either order (CrashMonkey seq-2).
    Workload { name: "two_files_fsync_ab", what: "write a and b, fsync a then b", setup: nothing, run: |r| {
        write_new(r, "a", b'A', 3000, false);
        write_new(r, "b", b'B', 3000, false);
        fsync(r, "a");
        fsync(r, "b");
    } },
    Workload { name: "two_files_fsync_ba", what: "write a and b, fsync b then a", setup: nothing, run: |r| {
        write_new(r, "a", b'A', 3000, false);
        write_new(r, "b", b'B', 3000, false);
        fsync(r, "b");
        fsync(r, "a");
    } },
    Workload { name: "seq2_create_rename_fsync", what: "create and fsync d/f, rename it to d/g, fsync d/g (seq-2)", setup: |r| mkdir(r, "d"), run: |r| {
        write_new(r, "d/f", b'B', 100, true);
        rename(r, "d/f", "d/g");
        fsync(r, "d/g");
    } },
];

fn find(name: &str) -> &'static Workload {
    WORKLOADS.iter().find(|w| w.name == name).unwrap_or_else(|| {
        eprintln!("litmus: no workload {name:?} (litmus list names them)");
        std::process::exit(2)
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("list") => {
            for w in WORKLOADS {
                println!("{}\t{}", w.name, w.what);
            }
        }
        Some(cmd @ ("setup" | "run")) if args.len() == 4 => {
            let w = find(&args[2]);
            let root = Root(Path::new(&args[3]).to_path_buf());
            if cmd == "setup" {
                (w.setup)(&root);
            } else {
                (w.run)(&root);
                // A line seedfall's trace and the oracle's log both show.
                println!("litmus {}: done", w.name);
            }
        }
        _ => {
            eprintln!("usage: litmus list | litmus setup NAME ROOT | litmus run NAME ROOT");
            std::process::exit(2);
        }
    }
}
