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

/// The oracle imports of the `seedfall` module (docs/abi.md); the Rust SDK
/// does not wrap them yet.
#[cfg(target_arch = "wasm32")]
mod oracle {
    #[link(wasm_import_module = "seedfall")]
    extern "C" {
        fn oracle_put(key_ptr: *const u8, key_len: usize, value_ptr: *const u8, value_len: usize);
        fn oracle_get(key_ptr: *const u8, key_len: usize, buf_ptr: *mut u8, buf_len: usize) -> i32;
    }

    pub fn put(key: &str, value: &str) {
        unsafe { oracle_put(key.as_ptr(), key.len(), value.as_ptr(), value.len()) }
    }

    pub fn get(key: &str) -> Option<String> {
        let mut buf = vec![0u8; 64];
        let n = unsafe { oracle_get(key.as_ptr(), key.len(), buf.as_mut_ptr(), buf.len()) };
        if n < 0 || n as usize > buf.len() {
            return None;
        }
        buf.truncate(n as usize);
        String::from_utf8(buf).ok()
    }
}

/// Off wasm32 there is no crash to survive: the oracle is this process's memory.
#[cfg(not(target_arch = "wasm32"))]
mod oracle {
    use std::collections::HashMap;
    use std::sync::Mutex;
    static MEM: Mutex<Option<HashMap<String, String>>> = Mutex::new(None);

    pub fn put(key: &str, value: &str) {
        MEM.lock().unwrap().get_or_insert_with(HashMap::new).insert(key.into(), value.into());
    }

    pub fn get(key: &str) -> Option<String> {
        MEM.lock().unwrap().as_ref().and_then(|m| m.get(key).cloned())
    }
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

    let starts: u64 = oracle::get("starts").and_then(|s| s.parse().ok()).unwrap_or(0) + 1;
    oracle::put("starts", &starts.to_string());
    let acked: u64 = oracle::get("acked").and_then(|s| s.parse().ok()).unwrap_or(0);

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
        oracle::put("acked", &k.to_string());
    }
    seedfall::reachable!("every insert committed", { "inserts" => inserts, "starts" => starts });
}
