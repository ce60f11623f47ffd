//! Work spread over a few threads, order kept (node trees with hundreds of SR-IOV functions,
//! fleet's thousands of snapshots).

/// Whether work spread over threads pays in this build. The static (musl) build's allocator
/// (dlmalloc, see static_alloc.rs) serialises every allocation behind one lock, and this work allocates
/// at every step: `fleet` over 1 024 JSON snapshots took 938 ms of CPU (484 ms wall) on two
/// threads and 193 ms on one; glibc's per-thread arenas made it 179 ms CPU, 104 ms wall, on two.
pub const THREADS_PAY: bool = !cfg!(target_env = "musl");

/// Map `f` over `items`, on a few threads when there are enough items to pay for them (nodes
/// with hundreds of SR-IOV functions) and threads pay in this build; order is kept.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if !THREADS_PAY || items.len() < 48 {
        return items.iter().map(f).collect();
    }
    // Asked only here: it reads cgroup files.
    let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(4);
    if threads < 2 {
        return items.iter().map(f).collect();
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = items.chunks(chunk).map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>())).collect();
        // A worker's panic is the caller's: dropping its chunk would lose devices silently.
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}
