//! sqlitekv: a key-value table in SQLite (rusqlite's bundled C library,
//! built for wasm32-wasip1), inserting rows one transaction at a time.
//!
//! Every insert that commits is acknowledged: its key goes into seedfall's
//! test oracle, which lives outside the node and survives its crashes. When
//! the node starts again after a crash, `main` runs from the top: it opens
//! the database (SQLite rolls back a hot journal here, if there is one) and
//! checks that every acknowledged key is still in the table and that
//! `PRAGMA integrity_check` says `ok`.
//!
//! Arguments: `--journal MODE` (`journal_mode`, default `wal`), `--sync
//! LEVEL` (`synchronous`, default `full`), `--locking MODE` (`locking_mode`,
//! default `exclusive`: WAL without shared memory, see pre.h), `--inserts N`
//! (default 1000), `--vfs NAME` (default `unix-none`: SQLite's unix VFS
//! without file locks; a node is one process).
use rusqlite::{Connection, OpenFlags};

const DB: &str = "/data/kv.db";

/// A number kept as text in seedfall's test oracle (`seedfall::remember`,
/// docs/sdk-rust.md), which outlives the node's crashes.
fn recall_number(key: &str) -> Option<u64> {
    seedfall::recall(key).and_then(|v| String::from_utf8(v).ok()).and_then(|s| s.parse().ok())
}

fn arg(name: &str, default: &str) -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned().unwrap_or_else(|| default.to_string())
}

fn main() {
    let journal = arg("--journal", "wal");
    let sync = arg("--sync", "full");
    let inserts: u64 = arg("--inserts", "1000").parse().expect("--inserts N");
    let vfs = arg("--vfs", "unix-none");
    let locking = arg("--locking", "exclusive");

    let starts: u64 = recall_number("starts").unwrap_or(0) + 1;
    seedfall::remember("starts", starts.to_string().as_bytes());
    let acked: u64 = recall_number("acked").unwrap_or(0);

    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE;
    let db = Connection::open_with_flags_and_vfs(DB, flags, vfs.as_str()).unwrap_or_else(|e| panic!("open {DB} (vfs {vfs}): {e}"));
    let lm: String = db
        .query_row(&format!("PRAGMA locking_mode={locking}"), [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("PRAGMA locking_mode={locking}: {e}"));
    let mode: String = db
        .query_row(&format!("PRAGMA journal_mode={journal}"), [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("PRAGMA journal_mode={journal}: {e}"));
    // A build without WAL answers "delete" to journal_mode=WAL: do not go on
    // testing something else than what was asked for.
    if mode != journal {
        panic!("PRAGMA journal_mode={journal} answered {mode:?}");
    }
    db.execute_batch(&format!("PRAGMA synchronous={sync}")).unwrap_or_else(|e| panic!("PRAGMA synchronous={sync}: {e}"));
    let level: i64 = db.query_row("PRAGMA synchronous", [], |r| r.get(0)).unwrap();
    if starts == 1 {
        println!("SQLite {}, vfs {vfs}, locking_mode {lm}, journal_mode {mode}, synchronous {level}", rusqlite::version());
    }
    db.execute_batch("CREATE TABLE IF NOT EXISTS kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        .unwrap_or_else(|e| panic!("create table: {e}"));

    if starts > 1 {
        // Keys are inserted in order, one per transaction: "acked" = n means
        // keys 1..=n were all acknowledged.
        let found: u64 = db
            .query_row("SELECT count(*) FROM kv WHERE k <= ?1", [acked], |r| r.get(0))
            .unwrap_or_else(|e| panic!("count: {e}"));
        let max: Option<u64> = db.query_row("SELECT max(k) FROM kv", [], |r| r.get(0)).unwrap();
        println!("start {starts}: {found} of {acked} acknowledged rows found (largest key {max:?})");
        seedfall::always!(found == acked, "acknowledged inserts survive crashes",
            { "acknowledged" => acked, "found" => found, "largest key" => max });
        let integrity: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap_or_else(|e| e.to_string());
        seedfall::always!(integrity == "ok", "the database passes integrity_check", { "integrity_check" => integrity });
    }

    let first = db.query_row("SELECT coalesce(max(k), 0) FROM kv", [], |r| r.get::<_, u64>(0)).unwrap() + 1;
    let mut insert = db.prepare("INSERT INTO kv (k, v) VALUES (?1, ?2)").unwrap();
    for k in first..=inserts {
        insert.execute(rusqlite::params![k, format!("value-{k}")]).unwrap_or_else(|e| panic!("insert {k}: {e}"));
        // Committed (autocommit): acknowledged.
        seedfall::remember("acked", k.to_string().as_bytes());
    }
    seedfall::reachable!("every insert committed", { "inserts" => inserts, "starts" => starts });
}
