//! nebari-kv: a small key-value service on [Nebari] 0.5.5 (khonsulabs'
//! transactional B-tree store, the one under BonsaiDb), used as its docs
//! show, with several writer threads committing at once.
//!
//! - Writers: `--writers W` std threads. Writer N owns key `wN` and writes
//!   versions 1, 2, ... up to `--ops`, each in one transaction over two trees,
//!   `a` and `b`, setting `wN` to the version in both. A version is
//!   acknowledged when `ExecutingTransaction::commit` returns: Nebari
//!   documents that then "all data updates are guaranteed to be ... impervious
//!   to sudden failures such as a power outage".
//! - Nebari's own threads do the work: the commit writes both tree files in
//!   parallel on its thread pool ("roots-txwriter", two threads here), then
//!   hands the transaction to its log thread ("nebari-txlog"), which appends
//!   it to the transaction log and fsyncs; writers wait on channels.
//! - Recovery: `main` runs from the top after every crash. Opening the roots
//!   reads the transaction log; opening a tree checks its last header against
//!   the log and scans back past any commit the log never recorded. Then the
//!   checks: every acknowledged version is there, in both trees, and the two
//!   trees agree (a transaction is atomic across its trees).
//!
//! What the client was told lives in seedfall's test oracle
//! (`seedfall::remember`), outside the node, so it survives the crashes.
//!
//! [Nebari]: https://github.com/khonsulabs/nebari
use nebari::io::fs::StdFile;
use nebari::tree::{Root, Unversioned};
use nebari::{Config, Roots, ThreadPool};

const DB: &str = "/data/db";
/// The two trees every transaction writes.
const TREES: [&str; 2] = ["a", "b"];

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).map(|v| v.parse().expect(name)).unwrap_or(default)
}

/// A number kept as text in the test oracle.
fn recall_number(key: &str) -> u64 {
    seedfall::recall(key).and_then(|v| String::from_utf8(v).ok()).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// The version stored under `key` in `tree` (0: none).
fn read(roots: &Roots<StdFile>, tree: &str, key: &str) -> u64 {
    let tree = roots.tree(Unversioned::tree(tree.to_string())).unwrap_or_else(|e| panic!("open tree {tree}: {e}"));
    match tree.get(key.as_bytes()).unwrap_or_else(|e| panic!("get {key}: {e}")) {
        None => 0,
        Some(v) => std::str::from_utf8(&v).ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{key} holds {v:?}")),
    }
}

fn main() {
    let writers = arg("--writers", 3);
    let ops = arg("--ops", 300);
    // 0: no compaction. Nebari leaves scheduling compaction to its user;
    // the compactor thread below runs one every 50 ms by default.
    let compact_every_ms = arg("--compact-every-ms", 50);

    let starts = recall_number("starts") + 1;
    seedfall::remember("starts", starts.to_string().as_bytes());

    // Two commit threads, so a two-tree transaction writes its trees in
    // parallel (the default sizes the pool by available_parallelism, which
    // is 1 on wasi).
    let pool = ThreadPool::new(2);
    let roots = Config::default_for(DB).shared_thread_pool(&pool).open().unwrap_or_else(|e| panic!("open {DB}: {e}"));

    if starts > 1 {
        for w in 0..writers {
            let key = format!("w{w}");
            let a = read(&roots, TREES[0], &key);
            let b = read(&roots, TREES[1], &key);
            let acked = recall_number(&format!("acked-{key}"));
            let attempted = recall_number(&format!("attempt-{key}"));
            seedfall::always!(a == b, "a transaction is atomic across its trees",
                { "key" => key.as_str(), "a" => a, "b" => b, "start" => starts });
            seedfall::always!(a >= acked && b >= acked, "acknowledged transactions survive crashes",
                { "key" => key.as_str(), "acknowledged" => acked, "a" => a, "b" => b, "start" => starts });
            seedfall::always!(a <= attempted, "recovery finds no version that was never written",
                { "key" => key.as_str(), "attempted" => attempted, "a" => a });
        }
        println!("start {starts}: checked {writers} keys");
        seedfall::reachable!("a restart checked the recovered trees", { "start" => starts });
    }

    let mut threads = Vec::new();
    for w in 0..writers {
        let roots = roots.clone();
        threads.push(std::thread::spawn(move || {
            let key = format!("w{w}");
            // Go on after the newest version recovered or acknowledged.
            let first = read(&roots, TREES[0], &key).max(recall_number(&format!("acked-{key}"))) + 1;
            for version in first..=ops {
                seedfall::remember(&format!("attempt-{key}"), version.to_string().as_bytes());
                let tx = roots.transaction(&[Unversioned::tree(TREES[0]), Unversioned::tree(TREES[1])]).unwrap_or_else(|e| panic!("begin: {e}"));
                for i in 0..TREES.len() {
                    let mut tree = tx.tree::<Unversioned>(i).expect("a tree of the transaction");
                    tree.set(key.clone().into_bytes(), version.to_string().into_bytes()).unwrap_or_else(|e| panic!("set {key}: {e}"));
                }
                tx.commit().unwrap_or_else(|e| panic!("commit {key} {version}: {e}"));
                // Acknowledged: commit returned.
                seedfall::remember(&format!("acked-{key}"), version.to_string().as_bytes());
            }
        }));
    }
    // A compactor thread, as a service runs one: it rewrites each tree's
    // live data into `<tree>.nebari.compacting` and renames it over the tree
    // file, while the writers go on committing.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let compactor = (compact_every_ms > 0).then(|| {
        let (roots, done) = (roots.clone(), done.clone());
        std::thread::spawn(move || {
            // Bounded: at most one compaction per period of a 60 s run.
            for round in 0..60_000 / compact_every_ms {
                if done.load(std::sync::atomic::Ordering::Acquire) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(compact_every_ms));
                let name = TREES[(round % 2) as usize];
                let tree = roots.tree(Unversioned::tree(name)).unwrap_or_else(|e| panic!("open tree {name}: {e}"));
                tree.compact().unwrap_or_else(|e| panic!("compact {name}: {e}"));
                seedfall::reachable!("the compactor thread compacted a tree while writers committed", { "tree" => name, "round" => round });
            }
        })
    });
    for t in threads {
        t.join().expect("a writer panicked");
    }
    done.store(true, std::sync::atomic::Ordering::Release);
    if let Some(c) = compactor {
        c.join().expect("the compactor panicked");
    }
    seedfall::reachable!("every writer committed all its transactions", { "writers" => writers, "ops" => ops, "starts" => starts });
}
