//! pool: rayon on wasm32-wasip1-threads. `available_parallelism` is
//! unsupported on wasi, so rayon would start one worker; the pool takes
//! `RAYON_NUM_THREADS` from the environment (the node's `env`), else
//! `THREADS_DEFAULT`, and sums the squares of 1..=N with a parallel
//! iterator and a `rayon::join` of two halves. Both must be exact in every
//! run, whichever worker steals what.
use rayon::prelude::*;

/// Workers when the environment does not say.
const THREADS_DEFAULT: usize = 4;
/// The sum runs over 1..=N.
const N: u64 = 20_000;

fn main() {
    let threads = std::env::var("RAYON_NUM_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(THREADS_DEFAULT);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("the pool starts");
    let want = N * (N + 1) * (2 * N + 1) / 6;
    let (sum, halves, workers) = pool.install(|| {
        let sum: u64 = (1..=N).into_par_iter().map(|x| x * x).sum();
        let (low, high) = rayon::join(|| (1..=N / 2).map(|x| x * x).sum::<u64>(), || (N / 2 + 1..=N).map(|x| x * x).sum::<u64>());
        (sum, low + high, rayon::current_num_threads())
    });
    println!("sum of squares 1..={N}: {sum} on {workers} workers");
    seedfall::always!(sum == want, "pool: the parallel sum is exact", { "sum" => sum, "want" => want, "workers" => workers });
    seedfall::always!(halves == want, "pool: the joined halves add up", { "halves" => halves, "want" => want });
    seedfall::always!(workers == threads, "pool: the pool has the workers asked for", { "workers" => workers, "threads" => threads });
}
