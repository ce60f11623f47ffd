//! The static (musl) build's allocator, the one the packages ship; the glibc build keeps glibc's
//! malloc.
//!
//! musl's own malloc maps and unmaps memory for small allocations: 57 mmap and 39 munmap calls
//! in one hook run on the story node, against 14 and 7 with dlmalloc; hook CPU 2.92 -> 2.11 ms
//! (live, interleaved, commit 59f355b). dlmalloc is the allocator Rust's own standard library
//! uses where there is no libc malloc; pure Rust, so the aarch64 build still needs no C
//! compiler. It takes one lock per allocation, so work spread over threads contends on it:
//! `parallel::THREADS_PAY` is false in this build.
//!
//! The lock is a spin lock (one compare-and-swap to take, a plain store to release) rather than
//! dlmalloc's own global one, a pthread mutex (two atomic operations and two calls per
//! allocation): the hook 1.96 M -> 1.59 M instructions, `fleet` over 1 024 snapshots 152 ->
//! 139 ms CPU, `probe --json` on the story node 4.38 -> 4.27 ms (commit 52df14d). perf put a fifth
//! of probe's samples in the mutex; the time measured whole is the smaller gain above.
//!
//! The hook, a process that lives a few milliseconds at every container start, also takes an
//! arena (`arena`): allocation bumps a pointer, free gives memory back only when it is the
//! latest block (a temporary path, a buffer grown in place), the rest goes with the process.
//! dlmalloc's malloc, free and realloc were 29 % of the hook's instructions (callgrind, story
//! node: 3 533 allocations). Bounded: past `ARENA_BYTES` dlmalloc serves as before.

use ibwire::arena::Arena;
use std::alloc::{GlobalAlloc, Layout};

pub struct Alloc(spin::Mutex<Heap>);
pub struct Heap(dlmalloc::Dlmalloc);
// SAFETY: the heap is only ever used under the lock.
unsafe impl Send for Heap {}

#[global_allocator]
static ALLOC: Alloc = Alloc(spin::Mutex::new(Heap(dlmalloc::Dlmalloc::new())));

/// The arena's address space (`arena`): reserved, not committed (MAP_NORESERVE); the pages
/// the hook touches are what it costs. Measured (hook --root, the highest address handed out):
/// 279 KiB on the story node, 6.2 MiB on 512 SR-IOV functions; past it, dlmalloc.
const ARENA_BYTES: usize = 16 << 20;

static ARENA: Arena = Arena::new();

/// From here on this process allocates from an arena (the hook: see the module's comment).
/// Once, before any thread exists; without the mapping, nothing changes.
pub fn arena() {
    if ARENA.is_on() {
        return;
    }
    // SAFETY: an anonymous private mapping, owned by the arena for the process's life.
    let p = unsafe {
        nix::libc::mmap(
            std::ptr::null_mut(),
            ARENA_BYTES,
            nix::libc::PROT_READ | nix::libc::PROT_WRITE,
            nix::libc::MAP_PRIVATE | nix::libc::MAP_ANONYMOUS | nix::libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p != nix::libc::MAP_FAILED {
        ARENA.init(p as usize, ARENA_BYTES);
    }
}

// SAFETY: every dlmalloc call holds the lock; dlmalloc's contract is GlobalAlloc's. Arena
// blocks are disjoint ranges of a mapping dlmalloc never sees (arena.rs, tested against a
// model). Not inlined: inlined, dlmalloc's malloc and free were copied into every allocation
// site (text 4.56 -> 5.89 MB).
unsafe impl GlobalAlloc for Alloc {
    #[inline(never)]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        match ARENA.bump(l.size(), l.align()) {
            Some(p) => p as *mut u8,
            None => self.0.lock().0.malloc(l.size(), l.align()),
        }
    }
    #[inline(never)]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if ARENA.contains(p as usize) {
            ARENA.give_back(p as usize, l.size());
            return;
        }
        self.0.lock().0.free(p, l.size(), l.align())
    }
    #[inline(never)]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        match ARENA.bump(l.size(), l.align()) {
            Some(p) => {
                // Only bytes the arena handed out before need clearing: the rest of the
                // mapping is still the kernel's zeroes.
                std::ptr::write_bytes(p as *mut u8, 0, ARENA.dirty_len(p, l.size()));
                p as *mut u8
            }
            None => self.0.lock().0.calloc(l.size(), l.align()),
        }
    }
    #[inline(never)]
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if !ARENA.contains(p as usize) {
            return self.0.lock().0.realloc(p, l.size(), l.align(), new);
        }
        if ARENA.resize_in_place(p as usize, l.size(), new) || new <= l.size() {
            return p;
        }
        // SAFETY: GlobalAlloc's contract: `new` at `l.align()` is a valid layout.
        let q = self.alloc(Layout::from_size_align_unchecked(new, l.align()));
        if !q.is_null() {
            std::ptr::copy_nonoverlapping(p, q, l.size());
        }
        q
    }
}

/// A child forked while another thread held the lock would spin forever at its first
/// allocation: fork takes the lock first and both sides release it.
pub fn fork_safe() {
    extern "C" fn take() {
        std::mem::forget(ALLOC.0.lock());
    }
    extern "C" fn give() {
        // SAFETY: `take` holds it, in this process (parent) or its copy (child).
        unsafe { ALLOC.0.force_unlock() }
    }
    // SAFETY: registering plain functions; called once, before any thread exists.
    unsafe { nix::libc::pthread_atfork(Some(take), Some(give), Some(give)) };
}
