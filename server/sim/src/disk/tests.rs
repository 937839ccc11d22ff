//! The disk's rules, model by model, on the disk alone.
use super::*;

const T: VTime = VTime(1);

fn posix() -> Disk {
    Disk::new(512, FsModel::Posix)
}

fn ext4() -> Disk {
    Disk::new(512, FsModel::Ext4)
}

fn read_all(d: &mut Disk, path: &str) -> Result<Vec<u8>, Errno> {
    let ino = d.lookup(ROOT, path)?;
    let mut buf = vec![0u8; 1 << 16];
    let n = d.read_at(ino, 0, &mut buf)?;
    Ok(buf[..n].to_vec())
}

#[test]
fn files_and_directories() {
    let mut d = posix();
    let dir = d.mkdir(ROOT, "data", T).unwrap();
    let f = d.create_file(dir, "log", T).unwrap();
    d.write_at(f, 0, b"hello", T).unwrap();
    d.write_at(f, 3, b"p!", T).unwrap();
    assert_eq!(read_all(&mut d, "data/log").unwrap(), b"help!");
    assert_eq!(d.lookup(ROOT, "data/../data/./log").unwrap(), f);
    assert_eq!(d.lookup(ROOT, "../../data/log").unwrap(), f, ".. stops at the root");
    assert_eq!(d.create_file(dir, "log", T), Err(errno::EXIST));
    assert_eq!(d.rmdir(ROOT, "data", T), Err(errno::NOTEMPTY));
    d.rename(dir, "log", ROOT, "moved", T).unwrap();
    assert_eq!(d.lookup(ROOT, "data/log"), Err(errno::NOENT));
    assert_eq!(d.lookup(ROOT, "moved").unwrap(), f);
    d.rmdir(ROOT, "data", T).unwrap();
    let names: Vec<String> = d.list(ROOT).unwrap().into_iter().map(|e| e.0).collect();
    assert_eq!(names, [".", "..", "moved"]);
}

#[test]
fn rename_refuses_to_move_a_dir_into_itself() {
    let mut d = posix();
    let a = d.mkdir(ROOT, "a", T).unwrap();
    d.mkdir(a, "b", T).unwrap();
    let b = d.lookup(ROOT, "a/b").unwrap();
    assert_eq!(d.rename(ROOT, "a", b, "a", T), Err(errno::INVAL));
}

#[test]
fn unsynced_data_is_lost_synced_data_kept() {
    let mut d = posix();
    let f = d.create_file(ROOT, "f", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.write_at(f, 0, b"synced", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.write_at(f, 6, b" and not", T).unwrap();
    assert_eq!(read_all(&mut d, "f").unwrap(), b"synced and not");
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "f").unwrap(), b"synced");
}

#[test]
fn names_need_a_directory_fsync() {
    let mut d = posix();
    let f = d.create_file(ROOT, "new", T).unwrap();
    d.write_at(f, 0, b"x", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.crash(false, |n| n - 1);
    assert_eq!(d.lookup(ROOT, "new"), Err(errno::NOENT), "file fsync alone does not make the name durable");
    let f = d.create_file(ROOT, "old", T).unwrap();
    d.write_at(f, 0, b"v1", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.rename(ROOT, "old", ROOT, "renamed", T).unwrap();
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "old").unwrap(), b"v1", "rename without directory fsync is undone");
    assert_eq!(d.lookup(ROOT, "renamed"), Err(errno::NOENT));
}

#[test]
fn torn_writes_keep_whole_sectors_inside_a_length_the_file_had() {
    let mut d = Disk::new(512, FsModel::Posix);
    let f = d.create_file(ROOT, "t", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.write_at(f, 0, &vec![b'a'; 2048], T).unwrap();
    // posix: the size the write set reached the disk (choice 0 of [2048, 0]),
    // then sectors 0 and 2 did and 1 and 3 did not.
    let mut picks = [0, 0, 1, 0, 1].into_iter();
    let r = d.crash(true, |_| picks.next().unwrap());
    assert_eq!((r.sectors_lost, r.sectors_torn_kept), (2, 2));
    let data = read_all(&mut d, "t").unwrap();
    assert_eq!(data.len(), 2048, "a length the program set");
    assert!(data[..512].iter().all(|&b| b == b'a'));
    assert!(data[512..1024].iter().all(|&b| b == 0));
    assert!(data[1024..1536].iter().all(|&b| b == b'a'));
    assert!(data[1536..].iter().all(|&b| b == 0));
}

#[test]
fn under_ext4_a_kept_sector_never_lengthens_a_file() {
    // The false alarm of an earlier model: an unsynced append's torn sector
    // gave the file a length no call set (a sector boundary past its size).
    let mut d = Disk::new(512, FsModel::Ext4);
    let f = d.create_file(ROOT, "t", T).unwrap();
    d.write_at(f, 0, &vec![b'a'; 100], T).unwrap();
    d.sync(f, false, T).unwrap();
    d.write_at(f, 100, &vec![b'b'; 20_000], T).unwrap();
    d.crash(true, |_| 0);
    assert_eq!(read_all(&mut d, "t").unwrap(), vec![b'a'; 100], "nothing past the committed size shows");
}

#[test]
fn under_ext4_an_append_inside_the_last_block_commits_its_length_over_zeros() {
    let mut d = Disk::new(512, FsModel::Ext4);
    let f = d.create_file(ROOT, "f", T).unwrap();
    d.write_at(f, 0, &vec![b'a'; 1000], T).unwrap();
    d.sync(f, false, T).unwrap();
    // 300 bytes inside the 4 KiB block the file has; then another file's
    // fsync commits the journal, and with it the new length.
    d.write_at(f, 1000, &vec![b'b'; 300], T).unwrap();
    let g = d.create_file(ROOT, "g", T).unwrap();
    d.sync(g, false, T).unwrap();
    d.crash(true, |n| n - 1);
    let data = read_all(&mut d, "f").unwrap();
    assert_eq!(data.len(), 1300);
    assert!(data[1000..].iter().all(|&b| b == 0), "the length is durable, the bytes were never written");
    // An append into a new block is not committed by another file's fsync.
    let mut d = Disk::new(512, FsModel::Ext4);
    let f = d.create_file(ROOT, "f", T).unwrap();
    d.write_at(f, 0, &vec![b'a'; 4096], T).unwrap();
    d.sync(f, false, T).unwrap();
    d.write_at(f, 4096, &vec![b'b'; 300], T).unwrap();
    let g = d.create_file(ROOT, "g", T).unwrap();
    d.sync(g, false, T).unwrap();
    d.crash(true, |_| 0);
    assert_eq!(read_all(&mut d, "f").unwrap().len(), 4096);
}

#[test]
fn under_xfs_a_file_renamed_over_another_unsynced_is_empty() {
    let mut d = Disk::new(512, FsModel::Xfs);
    let old = d.create_file(ROOT, "cur", T).unwrap();
    d.write_at(old, 0, b"old", T).unwrap();
    d.sync(old, false, T).unwrap();
    let tmp = d.create_file(ROOT, "cur.tmp", T).unwrap();
    d.write_at(tmp, 0, b"new", T).unwrap();
    d.rename(ROOT, "cur.tmp", ROOT, "cur", T).unwrap();
    let other = d.create_file(ROOT, "other", T).unwrap();
    d.sync(other, false, T).unwrap();
    d.crash(true, |n| n - 1);
    assert_eq!(read_all(&mut d, "cur").unwrap(), b"", "xfs has no replace-via-rename flush");
}

#[test]
fn under_btrfs_an_fsync_makes_only_that_file_durable() {
    let mut d = Disk::new(512, FsModel::Btrfs);
    let a = d.create_file(ROOT, "a", T).unwrap();
    let b = d.create_file(ROOT, "b", T).unwrap();
    d.write_at(a, 0, b"aaa", T).unwrap();
    d.write_at(b, 0, b"bbb", T).unwrap();
    d.sync(b, false, T).unwrap();
    d.crash(true, |_| 0);
    assert_eq!(d.lookup(ROOT, "a"), Err(errno::NOENT), "a was never synced");
    assert_eq!(read_all(&mut d, "b").unwrap(), b"bbb");
}

#[test]
fn posix_lets_a_rename_survive_whole_or_not_at_all() {
    for (pick, want) in [(0, ("new", false)), (1, ("old", true))] {
        let mut d = posix();
        let old = d.create_file(ROOT, "cur", T).unwrap();
        d.write_at(old, 0, b"old", T).unwrap();
        d.sync(old, false, T).unwrap();
        let tmp = d.create_file(ROOT, "cur.tmp", T).unwrap();
        d.write_at(tmp, 0, b"new", T).unwrap();
        d.sync(tmp, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.rename(ROOT, "cur.tmp", ROOT, "cur", T).unwrap();
        d.crash(true, |_| pick);
        assert_eq!(read_all(&mut d, "cur").unwrap(), want.0.as_bytes());
        assert_eq!(d.lookup(ROOT, "cur.tmp").is_ok(), want.1, "the rename is one choice");
    }
}

#[test]
fn fsyncgate_drops_the_failed_pages() {
    let mut d = posix();
    let f = d.create_file(ROOT, "g", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.write_at(f, 0, b"lost", T).unwrap();
    assert_eq!(d.sync(f, true, T), Err(errno::IO));
    assert_eq!(read_all(&mut d, "g").unwrap(), b"lost", "the cache still shows the data");
    assert_eq!(d.sync(f, false, T), Ok(()), "a later fsync succeeds");
    d.crash(false, |n| n - 1);
    // The later fsync wrote the metadata (the new size) but not the
    // dropped pages: the file reads as zeros, as on Linux after fsyncgate.
    assert_eq!(read_all(&mut d, "g").unwrap(), vec![0u8; 4], "the data never reached the disk");
}

#[test]
fn mutations_weaken_guarantees() {
    let mut d = posix();
    d.mutation = Some(Mutation::FsyncNoop);
    let f = d.create_file(ROOT, "m", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.write_at(f, 0, b"x", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "m").unwrap(), b"");
    let mut d = posix();
    d.mutation = Some(Mutation::DirFsyncIgnored);
    d.create_file(ROOT, "n", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.crash(false, |n| n - 1);
    assert_eq!(d.lookup(ROOT, "n"), Err(errno::NOENT));
}


#[test]
fn ext4_any_fsync_commits_every_name_made_before_it() {
    let mut d = ext4();
    let dir = d.mkdir(ROOT, "data", T).unwrap();
    let f = d.create_file(dir, "log", T).unwrap();
    d.write_at(f, 0, b"x", T).unwrap();
    d.sync(f, false, T).unwrap();
    let r = d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "data/log").unwrap(), b"x", "the file's fsync made its name durable, and its folder's");
    assert!(r.losses.is_empty(), "{:?}", r.losses);
    // A rename after the last fsync is undone; one before it is kept.
    let f = d.lookup(ROOT, "data/log").unwrap();
    d.rename(dir, "log", dir, "log.1", T).unwrap();
    let g = d.create_file(ROOT, "other", T).unwrap();
    d.sync(g, false, T).unwrap();
    d.rename(dir, "log.1", dir, "log.2", T).unwrap();
    let r = d.crash(false, |n| n - 1);
    assert_eq!(d.lookup(ROOT, "data/log.1").unwrap(), f);
    assert_eq!(r.losses, vec![Loss::RenameUndone { from: "/data/log.1".into(), to: "/data/log.2".into() }]);
}

#[test]
fn ext4_data_still_needs_its_own_fsync() {
    let mut d = ext4();
    let f = d.create_file(ROOT, "a", T).unwrap();
    let g = d.create_file(ROOT, "b", T).unwrap();
    d.write_at(f, 0, b"unsynced", T).unwrap();
    d.sync(g, false, T).unwrap();
    let r = d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "a").unwrap(), b"", "the name survived, the data did not");
    assert_eq!(r.losses, vec![Loss::Sectors { path: "/a".into(), lost: 1, torn_kept: 0 }, Loss::SizeReverted { path: "/a".into(), from: 8, to: 0 }]);
}

#[test]
fn ext4_commits_on_its_timer() {
    let mut d = ext4();
    d.create_file(ROOT, "early", T).unwrap();
    d.tick(VTime(4_000_000_000));
    d.crash(false, |n| n - 1);
    assert_eq!(d.lookup(ROOT, "early"), Err(errno::NOENT), "no commit before 5s");
    d.create_file(ROOT, "early", T).unwrap();
    d.tick(VTime(5_000_000_000));
    d.create_file(ROOT, "late", VTime(5_000_000_001)).unwrap();
    let r = d.crash(false, |n| n - 1);
    assert!(d.lookup(ROOT, "early").is_ok(), "committed at 5s");
    assert_eq!(r.losses, vec![Loss::NameLost { path: "/late".into(), dir: false }]);
}

#[test]
fn ext4_replace_via_rename_writes_the_data_first() {
    for mutation in [None, Some(Mutation::NoAutoDaAlloc)] {
        let mut d = ext4();
        d.mutation = mutation;
        let old = d.create_file(ROOT, "conf", T).unwrap();
        d.write_at(old, 0, b"v1", T).unwrap();
        d.sync(old, false, T).unwrap();
        let new = d.create_file(ROOT, "conf.tmp", T).unwrap();
        d.write_at(new, 0, b"v2", T).unwrap();
        d.rename(ROOT, "conf.tmp", ROOT, "conf", T).unwrap();
        let other = d.create_file(ROOT, "x", T).unwrap();
        d.sync(other, false, T).unwrap();
        d.crash(false, |n| n - 1);
        let want: &[u8] = if mutation.is_none() { b"v2" } else { b"" };
        assert_eq!(read_all(&mut d, "conf").unwrap(), want, "{mutation:?}");
    }
}

#[test]
fn ext4_replace_via_truncate_writes_the_data_at_close() {
    let mut d = ext4();
    let f = d.create_file(ROOT, "conf", T).unwrap();
    d.write_at(f, 0, b"old contents", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.set_size(f, 0, T).unwrap();
    d.write_at(f, 0, b"new", T).unwrap();
    d.closed(f);
    d.tick(VTime(6_000_000_000));
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "conf").unwrap(), b"new");
}

#[test]
fn posix_truncate_needs_the_files_fsync_ext4_a_commit() {
    for (mut d, survives) in [(posix(), false), (ext4(), true)] {
        let f = d.create_file(ROOT, "t", T).unwrap();
        d.write_at(f, 0, b"0123456789", T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.set_size(f, 4, T).unwrap();
        let g = d.create_file(ROOT, "g", T).unwrap();
        d.sync(g, false, T).unwrap();
        d.crash(false, |n| n - 1);
        let want: &[u8] = if survives { b"0123" } else { b"0123456789" };
        assert_eq!(read_all(&mut d, "t").unwrap(), want, "{:?}", d.model);
    }
}

#[test]
fn crash_losses_name_files_folders_renames_and_unlinks() {
    let mut d = posix();
    let keep = d.create_file(ROOT, "keep", T).unwrap();
    d.create_file(ROOT, "gone", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.unlink(ROOT, "gone", T).unwrap();
    d.rename(ROOT, "keep", ROOT, "kept", T).unwrap();
    d.mkdir(ROOT, "new", T).unwrap();
    let r = d.crash(false, |n| n - 1);
    assert_eq!(r.losses, vec![
        Loss::UnlinkUndone { path: "/gone".into() },
        Loss::RenameUndone { from: "/keep".into(), to: "/kept".into() },
        Loss::NameLost { path: "/new".into(), dir: true },
    ]);
    assert_eq!(d.lookup(ROOT, "keep").unwrap(), keep);
    assert_eq!(d.path_of(keep), "/keep");
}

#[test]
fn seeded_folders_and_files_are_durable() {
    let mut d = posix();
    d.seed_dir("/var/lib/app").unwrap();
    d.seed_file("/etc/app.conf", b"port=1").unwrap();
    d.crash(false, |n| n - 1);
    assert!(d.inode(d.lookup(ROOT, "var/lib/app").unwrap()).unwrap().is_dir());
    assert_eq!(read_all(&mut d, "etc/app.conf").unwrap(), b"port=1");
    assert_eq!(d.tree().iter().map(|e| e.path.as_str()).collect::<Vec<_>>(), ["/etc", "/etc/app.conf", "/var", "/var/lib", "/var/lib/app"]);
    assert_eq!(d.missing_dir(ROOT, "/data/log"), Some("/data".into()));
    assert_eq!(d.missing_dir(ROOT, "/var/lib/app/x"), None);
    assert_eq!(d.missing_dir(ROOT, "var/lib/nope/deeper/x"), Some("/var/lib/nope/deeper".into()));
}

#[test]
fn storage_faults_on_the_medium() {
    let mut d = posix();
    let f = d.create_file(ROOT, "m", T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.write_at(f, 0, &[b'a'; 1024], T).unwrap();
    d.sync(f, false, T).unwrap();
    // A latent sector error: EIO until the sector is written again.
    d.mark_bad(f, 1).unwrap();
    let mut buf = [0u8; 100];
    assert_eq!(d.read_at(f, 0, &mut buf), Ok(100), "sector 0 reads");
    assert_eq!(d.read_at(f, 600, &mut buf), Err(errno::IO));
    d.write_at(f, 512, &[b'b'; 512], T).unwrap();
    assert_eq!(d.read_at(f, 600, &mut buf), Ok(100), "a rewrite remaps it");
    // A lost write: fsync succeeds, the disk keeps the old data.
    d.sync(f, false, T).unwrap();
    d.write_at(f, 0, &[b'c'; 512], T).unwrap();
    d.lose_write(f, 0, 0).unwrap();
    d.sync(f, false, T).unwrap();
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "m").unwrap()[0], b'a');
    // A misdirected write lands on another sector.
    d.write_at(f, 0, &[b'd'; 512], T).unwrap();
    d.misdirect(f, 0, 0, 1).unwrap();
    d.sync(f, false, T).unwrap();
    d.crash(false, |n| n - 1);
    let data = read_all(&mut d, "m").unwrap();
    assert_eq!((data[0], data[512]), (b'a', b'd'), "sector 0 kept the old data, sector 1 got the write");
}

#[test]
fn deleted_files_are_freed_once_the_delete_is_durable_and_nothing_holds_them() {
    for model in [FsModel::Posix, FsModel::Ext4] {
        let mut d = Disk::new(512, model);
        let dir = d.seed_dir("/data").unwrap();
        let f = d.create_file(dir, "old.sst", T).unwrap();
        d.write_at(f, 0, &[7u8; 1 << 20], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(dir, false, T).unwrap();
        let held = d.held_bytes();
        assert!(held >= 1 << 20, "{model:?}: {held}");
        d.unlink(dir, "old.sst", T).unwrap();
        // Still open: kept, whatever is durable.
        d.sync(dir, false, T).unwrap();
        d.collect_orphans(|ino| ino == f);
        assert_eq!((d.orphans(), d.held_bytes()), (1, held), "{model:?}: an open file is kept");
        d.note_orphans_may_go();
        d.collect_orphans(|_| false);
        assert_eq!(d.orphans(), 0, "{model:?}: closed and durably deleted: freed");
        assert!(d.held_bytes() < 4096, "{model:?}: {}", d.held_bytes());
        assert_eq!(d.inode(f).err(), Some(errno::NOENT));
    }
    // Posix: until the folder is fsynced a crash brings the name back, so
    // the data stays.
    let mut d = posix();
    let dir = d.seed_dir("/data").unwrap();
    let f = d.create_file(dir, "a", T).unwrap();
    d.write_at(f, 0, b"keep", T).unwrap();
    d.sync(f, false, T).unwrap();
    d.sync(dir, false, T).unwrap();
    d.unlink(dir, "a", T).unwrap();
    d.collect_orphans(|_| false);
    assert_eq!(d.orphans(), 1);
    d.crash(false, |n| n - 1);
    assert_eq!(read_all(&mut d, "data/a").unwrap(), b"keep", "the unlink was undone");
    assert_eq!(d.orphans(), 0);
}

/// etcd's ZeroToEnd, then an append: cut down inside a block, grown back,
/// written across the next block boundary, no fsync; another file's fsync
/// commits. Measured by the oracle (litmus zero_to_end_write_across): the
/// freed blocks read zeros, and ext4 writes the block the cut fell in as
/// the cache holds it, xfs does not.
fn zero_to_end_then_commit(model: FsModel) -> Vec<u8> {
    let mut d = Disk::new(512, model);
    let f = d.create_file(ROOT, "wal", T).unwrap();
    d.write_at(f, 0, &[b'A'; 12288], T).unwrap();
    d.sync(f, false, T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    d.set_size(f, 3000, T).unwrap();
    d.set_size(f, 12288, T).unwrap();
    d.write_at(f, 3000, &[b'B'; 3000], T).unwrap();
    let g = d.create_file(ROOT, "g", T).unwrap();
    d.sync(g, false, T).unwrap();
    // No torn sector kept: only what the commit wrote.
    d.crash(true, |n| n - 1);
    read_all(&mut d, "wal").unwrap()
}

#[test]
fn a_commit_of_a_truncate_down_and_up_reads_zeros_past_the_cut() {
    let (ext4, xfs) = (zero_to_end_then_commit(FsModel::Ext4), zero_to_end_then_commit(FsModel::Xfs));
    let mut want = vec![b'A'; 3000];
    want.resize(12288, 0);
    assert_eq!(xfs, want, "xfs: zeros past the cut, nothing of the unsynced write");
    want[3000..4096].fill(b'B');
    assert_eq!(ext4, want, "ext4: the cut block as the cache held it, zeros after");
}

#[test]
fn posix_may_leave_a_file_cut_down_and_grown_back() {
    let mut lens = BTreeSet::new();
    for pick in 0..3 {
        let mut d = posix();
        let f = d.create_file(ROOT, "f", T).unwrap();
        d.write_at(f, 0, &[b'A'; 8192], T).unwrap();
        d.sync(f, false, T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        d.set_size(f, 3000, T).unwrap();
        d.set_size(f, 8192, T).unwrap();
        d.crash(false, |n| pick.min(n - 1));
        let data = read_all(&mut d, "f").unwrap();
        lens.insert((data.len(), data.iter().filter(|&&b| b == b'A').count()));
    }
    // Grown back over zeros, cut, or untouched.
    assert_eq!(lens, BTreeSet::from([(8192, 3000), (3000, 3000), (8192, 8192)]));
}

/// The disk's running totals are checked against a recount by a
/// `debug_assert`-style check (`Disk::account`): the release profile the
/// tests run keeps debug assertions on for this crate, so it runs here.
#[test]
fn the_tests_run_with_this_crates_debug_assertions_on() {
    assert!(cfg!(debug_assertions), "the release profile turns debug assertions off for seedfall-sim (Cargo.toml)");
    let mut d = ext4();
    let ino = d.create_file(ROOT, "a", T).unwrap();
    d.write_at(ino, 0, b"hello", T).unwrap();
    assert_eq!(d.totals(), d.recount());
}

/// A WAL's preallocated segment (etcd's pattern: write, preallocate, sync,
/// cut back to the end of the records and preallocate again at every
/// restart): the zero tail is never read or compared, and the tree's digest
/// still hashes every byte.
#[test]
fn a_preallocated_segment_through_crashes() {
    const SEGMENT: u64 = 4 << 20;
    for model in [FsModel::Posix, FsModel::Ext4] {
        let mut d = Disk::new(512, model);
        let f = d.create_file(ROOT, "wal", T).unwrap();
        d.sync(ROOT, false, T).unwrap();
        let mut end = 0u64;
        let mut flip = 0usize;
        for round in 0..4u8 {
            d.set_size(f, end, T).unwrap();
            d.set_size(f, SEGMENT, T).unwrap();
            d.sync(f, false, T).unwrap();
            let record = vec![round + 1; 700];
            d.write_at(f, end, &record, T).unwrap();
            d.sync(f, false, T).unwrap();
            end += record.len() as u64;
            d.write_at(f, end, &[0xee; 300], T).unwrap();
            d.crash(true, |n| {
                flip += 1;
                flip % n
            });
            let ino = d.lookup(ROOT, "wal").unwrap();
            assert_eq!(d.inode(ino).unwrap().size(), SEGMENT, "{}: the preallocation is durable", model.name());
            let mut bytes = vec![0u8; SEGMENT as usize];
            assert_eq!(d.read_at(ino, 0, &mut bytes).unwrap(), SEGMENT as usize);
            assert!(bytes[..end as usize].iter().enumerate().all(|(i, &b)| b == (i / 700) as u8 + 1), "{}: synced records kept", model.name());
            assert!(bytes[end as usize + 300..].iter().all(|&b| b == 0), "{}: the tail reads zeros", model.name());
            let mut h = crate::hash::Fnv1a::new();
            h.write(&bytes);
            let entry = d.tree().into_iter().find(|e| e.path == "/wal").unwrap();
            assert_eq!(entry.hash, Some(format!("{:016x}", h.value())), "{}: the digest hashes every byte", model.name());
            if let Kind::File(fs) = &d.inode(ino).unwrap().kind {
                assert!(fs.zeros_from <= (end + 300).div_ceil(512) * 512, "{}: the zeros are known after a crash ({} of {end})", model.name(), fs.zeros_from);
            }
        }
    }
}

#[test]
fn a_moment_tells_durable_dirty_new_replaced_and_deleted_apart() {
    let mut d = posix();
    let state = |d: &Disk, path: &str| d.moment().0.into_iter().find(|e| e.path == path).map(|e| (e.state, e.size, e.durable_size));
    let kept = d.create_file(ROOT, "kept", T).unwrap();
    d.write_at(kept, 0, b"safe", T).unwrap();
    d.sync(kept, false, T).unwrap();
    let old = d.create_file(ROOT, "target", T).unwrap();
    d.write_at(old, 0, b"old!", T).unwrap();
    d.sync(old, false, T).unwrap();
    let gone = d.create_file(ROOT, "gone", T).unwrap();
    d.sync(gone, false, T).unwrap();
    d.sync(ROOT, false, T).unwrap();
    assert_eq!(state(&d, "/kept"), Some(("durable", Some(4), Some(4))));
    // Bytes appended and not synced: the name is safe, the tail is not.
    d.write_at(kept, 4, b" and not", T).unwrap();
    assert_eq!(state(&d, "/kept"), Some(("dirty", Some(12), Some(4))));
    // A new file renamed over a durable one: a crash brings the old back.
    let new = d.create_file(ROOT, "tmp", T).unwrap();
    d.write_at(new, 0, b"new file", T).unwrap();
    assert_eq!(state(&d, "/tmp"), Some(("new", Some(8), None)));
    d.rename(ROOT, "tmp", ROOT, "target", T).unwrap();
    assert_eq!(state(&d, "/target"), Some(("replaced", Some(8), Some(4))));
    assert_eq!(state(&d, "/tmp"), None);
    // Unlinked, not yet durably: listed as gone from the cache.
    d.unlink(ROOT, "gone", T).unwrap();
    assert_eq!(state(&d, "/gone"), Some(("deleted", None, Some(0))));
    // After a crash, everything listed is durable again.
    d.crash(false, |n| n - 1);
    assert!(d.moment().0.iter().all(|e| e.state == "durable"), "{:?}", d.moment().0);
    assert_eq!(state(&d, "/target"), Some(("durable", Some(4), Some(4))));
}
