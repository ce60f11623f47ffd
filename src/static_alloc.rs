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

use std::alloc::{GlobalAlloc, Layout};

pub struct Alloc(spin::Mutex<Heap>);
pub struct Heap(dlmalloc::Dlmalloc);
// SAFETY: the heap is only ever used under the lock.
unsafe impl Send for Heap {}

#[global_allocator]
static ALLOC: Alloc = Alloc(spin::Mutex::new(Heap(dlmalloc::Dlmalloc::new())));

// SAFETY: every call holds the lock; dlmalloc's contract is GlobalAlloc's. Not inlined: inlined,
// dlmalloc's malloc and free were copied into every allocation site (text 4.56 -> 5.89 MB).
unsafe impl GlobalAlloc for Alloc {
    #[inline(never)]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        self.0.lock().0.malloc(l.size(), l.align())
    }
    #[inline(never)]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        self.0.lock().0.free(p, l.size(), l.align())
    }
    #[inline(never)]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        self.0.lock().0.calloc(l.size(), l.align())
    }
    #[inline(never)]
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        self.0.lock().0.realloc(p, l.size(), l.align(), new)
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
