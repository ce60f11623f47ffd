//! Work spread over a few threads, order kept (node trees with hundreds of SR-IOV functions,
//! fleet's thousands of snapshots).

/// Map `f` over `items`, on a few threads when there are enough items to pay for them (nodes
/// with hundreds of SR-IOV functions); order is kept.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < 48 {
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
