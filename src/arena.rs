//! A bump arena over a range of addresses, for the static build's allocator (static_alloc.rs):
//! the hook lives a few milliseconds, so its memory goes with the process instead of back to a
//! heap one block at a time. Only the latest block can come back (a temporary path, a buffer
//! grown in place); nothing here touches memory, it hands out addresses. Lock-free: every
//! change of `next` is a compare-and-swap, so concurrent callers get disjoint blocks.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

pub struct Arena {
    /// [base, end): the range; base 0 means no arena (every call declines).
    base: AtomicUsize,
    end: AtomicUsize,
    /// The first free address.
    next: AtomicUsize,
    /// The highest `next` so far: above it the range is as it was given (for a fresh mapping,
    /// zeroes).
    touched: AtomicUsize,
}

impl Default for Arena {
    fn default() -> Self {
        Self::new()
    }
}

impl Arena {
    pub const fn new() -> Self {
        Arena {
            base: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            touched: AtomicUsize::new(0),
        }
    }

    /// Serve [base, base + len) from now on. Once, before any other call; `base` not 0.
    pub fn init(&self, base: usize, len: usize) {
        self.next.store(base, Relaxed);
        self.touched.store(base, Relaxed);
        self.end.store(base.saturating_add(len), Relaxed);
        self.base.store(base, std::sync::atomic::Ordering::Release);
    }

    pub fn is_on(&self) -> bool {
        self.base.load(std::sync::atomic::Ordering::Acquire) != 0
    }

    /// Whether `p` came from this arena.
    pub fn contains(&self, p: usize) -> bool {
        let b = self.base.load(Relaxed);
        b != 0 && p >= b && p < self.end.load(Relaxed)
    }

    /// `size` bytes aligned to `align` (a power of two), or None when off or full.
    pub fn bump(&self, size: usize, align: usize) -> Option<usize> {
        if !self.is_on() {
            return None;
        }
        let end = self.end.load(Relaxed);
        let mut cur = self.next.load(Relaxed);
        loop {
            let at = cur.checked_add(align - 1)? & !(align - 1);
            let next = at.checked_add(size).filter(|&n| n <= end)?;
            match self.next.compare_exchange_weak(cur, next, Relaxed, Relaxed) {
                Ok(_) => {
                    self.touched.fetch_max(next, Relaxed);
                    return Some(at);
                }
                Err(now) => cur = now,
            }
        }
    }

    /// The block [p, p + size) is free: reused when it is the latest, else left until exit.
    pub fn give_back(&self, p: usize, size: usize) {
        let _ = self.next.compare_exchange(p + size, p, Relaxed, Relaxed);
    }

    /// The latest block [p, p + old) becomes [p, p + new) where it lies (true), when it is the
    /// latest and the arena has room.
    pub fn resize_in_place(&self, p: usize, old: usize, new: usize) -> bool {
        let Some(new_end) = p.checked_add(new).filter(|&e| e <= self.end.load(Relaxed)) else { return false };
        if self.next.compare_exchange(p + old, new_end, Relaxed, Relaxed).is_err() {
            return false;
        }
        self.touched.fetch_max(new_end, Relaxed);
        true
    }

    /// How many of the block's first bytes may hold earlier data (the rest is as given).
    pub fn dirty_len(&self, p: usize, size: usize) -> usize {
        self.touched.load(Relaxed).saturating_sub(p).min(size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Alloc(usize, u32),
        Free(usize),
        Grow(usize, usize),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (1usize..600, 0u32..6).prop_map(|(s, a)| Op::Alloc(s, a)),
            (0usize..64).prop_map(Op::Free),
            (0usize..64, 1usize..900).prop_map(|(i, s)| Op::Grow(i, s)),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Against a model over a real buffer: live blocks never overlap and keep their bytes,
        /// are aligned and inside the range; a block the arena calls clean is zero; only the
        /// latest block is reused or grown in place.
        #[test]
        fn blocks_stay_disjoint_and_intact(ops in proptest::collection::vec(op(), 1..120)) {
            let mut mem = vec![0u8; 16 << 10];
            let base = mem.as_mut_ptr() as usize;
            let a = Arena::new();
            prop_assert_eq!(a.bump(8, 8), None);
            a.init(base, mem.len());
            // (address, size, fill byte)
            let mut live: Vec<(usize, usize, u8)> = Vec::new();
            let mut fill = 1u8;
            let paint = |mem: &mut Vec<u8>, p: usize, s: usize, v: u8| mem[p - base..p - base + s].fill(v);
            for o in ops {
                match o {
                    Op::Alloc(s, al) => {
                        let align = 1usize << al;
                        let Some(p) = a.bump(s, align) else { continue };
                        prop_assert!(p % align == 0 && p >= base && p + s <= base + mem.len());
                        let dirty = a.dirty_len(p, s);
                        prop_assert!(mem[p - base + dirty..p - base + s].iter().all(|&b| b == 0), "clean bytes are zero");
                        for &(q, qs, _) in &live {
                            prop_assert!(p + s <= q || q + qs <= p, "overlap");
                        }
                        fill = fill.wrapping_add(1).max(1);
                        paint(&mut mem, p, s, fill);
                        live.push((p, s, fill));
                    }
                    Op::Free(i) if !live.is_empty() => {
                        let (p, s, _) = live.remove(i % live.len());
                        let next_before = a.next.load(Relaxed);
                        a.give_back(p, s);
                        let next_after = a.next.load(Relaxed);
                        prop_assert!(next_after == next_before || (next_before == p + s && next_after == p));
                    }
                    Op::Grow(i, new) if !live.is_empty() => {
                        let k = i % live.len();
                        let (p, s, v) = live[k];
                        let latest = a.next.load(Relaxed) == p + s;
                        if a.resize_in_place(p, s, new) {
                            prop_assert!(latest);
                            if new > s {
                                paint(&mut mem, p + s, new - s, v);
                            }
                            live[k] = (p, new, v);
                        } else {
                            prop_assert!(!latest || p + new > base + mem.len());
                        }
                    }
                    _ => {}
                }
                for &(p, s, v) in &live {
                    prop_assert!(mem[p - base..p - base + s].iter().all(|&b| b == v), "a live block changed");
                }
            }
        }
    }

    #[test]
    fn full_and_foreign() {
        let a = Arena::new();
        a.init(4096, 4096);
        assert_eq!(a.bump(4096, 1), Some(4096));
        assert_eq!(a.bump(1, 1), None, "full");
        assert!(a.contains(4096) && a.contains(8191) && !a.contains(8192) && !a.contains(4095));
        a.give_back(4096, 4096);
        assert_eq!(a.bump(usize::MAX, 1), None, "no overflow");
        assert_eq!(a.bump(16, 1 << 20), None, "alignment past the end");
        assert_eq!(a.bump(100, 64), Some(4096));
        assert!(!a.resize_in_place(4096, 100, 5000), "past the end");
        assert!(a.resize_in_place(4096, 100, 4096));
        assert_eq!(a.dirty_len(4096, 4096), 4096);
    }
}
