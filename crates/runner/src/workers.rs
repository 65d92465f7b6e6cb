//! The process's worker threads: one rayon pool per thread count, made on first use and kept
//! for the life of the process, which every part that plays in parallel (a run's stages, a
//! training's episodes, a tuning's evaluations, the benchmark) installs. An experiment that
//! trains, tunes and plays therefore starts its threads once, and a Python session that runs
//! many scenarios does not start a pool per call. Results never depend on the pool: work is
//! split by unit, and every unit draws from its own streams.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The pool of `threads` worker threads (at least one), made once per process.
pub fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>, rayon::ThreadPoolBuildError> {
    static POOLS: OnceLock<Mutex<BTreeMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let threads = threads.max(1);
    let mut pools = POOLS
        .get_or_init(|| Mutex::new(BTreeMap::new()))
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(pool) = pools.get(&threads) {
        return Ok(Arc::clone(pool));
    }
    let pool = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("dhumbal-worker-{i}"))
            .build()?,
    );
    pools.insert(threads, Arc::clone(&pool));
    Ok(pool)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_pool_per_thread_count() {
        let a = super::pool(2).unwrap();
        let b = super::pool(2).unwrap();
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(a.current_num_threads(), 2);
        assert_eq!(super::pool(0).unwrap().current_num_threads(), 1);
    }
}
