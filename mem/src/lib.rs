//! `memcpy`, `memmove`, `memcmp` and `bcmp` for ibwire's static (musl) build only.
//!
//! musl's x86_64 `memcpy` moves every copy with string instructions (`movsb` per byte to an
//! 8-byte boundary, then `rep movsq`, then `movsb` per byte), whose start-up cost is tens of
//! cycles, and its `memcmp` compares one byte per iteration. Rust calls them for most copies
//! and comparisons whose length is known only at run time: the few bytes JSON output appends
//! per value, path joins, hash-map key checks. On a 512-function node `probe --json` spent a
//! quarter of its samples in musl's `memcpy` (perf), and the static build's probe took 60 ms of
//! CPU against the glibc build's 46 ms.
//!
//! Linked first, these definitions are the ones every call resolves to, so the archive members
//! of musl's libc.a that define the same names are never pulled in (musl's `memmove`, the only
//! user of its `memcpy`'s internal entry, is replaced too). `no_builtins`: the compiler must not
//! turn these loops back into calls to the functions they define.
//!
//! Small copies load everything before they store (so they are also right for overlapping
//! ranges); larger ones move 16 bytes per step. Only the x86_64 static build links this crate
//! (there it was measured); the glibc build and the aarch64 one keep their libc's.
#![cfg_attr(not(test), no_std)]
#![no_builtins]

use core::ptr::{read_unaligned as load, write_unaligned as store};

type Block = [u64; 2];

/// `n <= 16` bytes; every load before any store.
#[inline(always)]
unsafe fn small(d: *mut u8, s: *const u8, n: usize) {
    if n >= 8 {
        let (a, b): (u64, u64) = (load(s.cast()), load(s.add(n - 8).cast()));
        store(d.cast(), a);
        store(d.add(n - 8).cast(), b);
    } else if n >= 4 {
        let (a, b): (u32, u32) = (load(s.cast()), load(s.add(n - 4).cast()));
        store(d.cast(), a);
        store(d.add(n - 4).cast(), b);
    } else if n > 0 {
        let (a, b, c) = (*s, *s.add(n / 2), *s.add(n - 1));
        *d = a;
        *d.add(n / 2) = b;
        *d.add(n - 1) = c;
    }
}

/// Forward: right for `d <= s` even when the ranges overlap (each block is loaded before the
/// stores reach it; the last block is loaded first).
#[inline(always)]
unsafe fn forward(d: *mut u8, s: *const u8, n: usize) {
    if n <= 16 {
        return small(d, s, n);
    }
    let last: Block = load(s.add(n - 16).cast());
    let mut i = 0;
    while i + 16 < n {
        let b: Block = load(s.add(i).cast());
        store(d.add(i).cast(), b);
        i += 16;
    }
    store(d.add(n - 16).cast(), last);
}

/// Backward: right for `d > s` when the ranges overlap (the first block is loaded first).
#[inline(always)]
unsafe fn backward(d: *mut u8, s: *const u8, n: usize) {
    if n <= 16 {
        return small(d, s, n);
    }
    let first: Block = load(s.cast());
    let mut i = n;
    while i > 16 {
        i -= 16;
        let b: Block = load(s.add(i).cast());
        store(d.add(i).cast(), b);
    }
    store(d.cast(), first);
}

/// # Safety
/// As C's `memcpy`: `s` readable and `d` writable for `n` bytes, the ranges not overlapping.
#[no_mangle]
pub unsafe extern "C" fn memcpy(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    forward(d, s, n);
    d
}

/// # Safety
/// As C's `memmove`: `s` readable and `d` writable for `n` bytes; they may overlap.
#[no_mangle]
pub unsafe extern "C" fn memmove(d: *mut u8, s: *const u8, n: usize) -> *mut u8 {
    if (d as usize).wrapping_sub(s as usize) >= n {
        forward(d, s, n);
    } else {
        backward(d, s, n);
    }
    d
}

/// # Safety
/// As C's `memcmp`: both readable for `n` bytes.
#[no_mangle]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    let mut i = 0;
    while i + 8 <= n {
        // Big-endian: the first differing byte decides, as in a byte-by-byte comparison.
        let x = u64::from_be_bytes(load(a.add(i).cast()));
        let y = u64::from_be_bytes(load(b.add(i).cast()));
        if x != y {
            return if x < y { -1 } else { 1 };
        }
        i += 8;
    }
    while i < n {
        let (x, y) = (*a.add(i), *b.add(i));
        if x != y {
            return i32::from(x) - i32::from(y);
        }
        i += 1;
    }
    0
}

/// # Safety
/// As `memcmp`; only zero or not zero is meaningful.
#[no_mangle]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    memcmp(a, b, n)
}

#[cfg(test)]
mod tests {
    //! Against oracles that move one byte at a time through volatile accesses: the compiler may
    //! not turn those into calls to memcpy or memcmp (which, in this test binary, are the ones
    //! above: an executable's definitions win over libc's for the whole process).
    use super::*;
    use proptest::prelude::*;
    use std::ptr::{read_volatile, write_volatile};

    fn oracle_move(buf: &mut [u8], src: usize, dst: usize, n: usize) {
        let mut tmp = [0u8; 600];
        for i in 0..n {
            // SAFETY: in bounds (the strategy keeps src + n and dst + n within buf).
            unsafe { write_volatile(&mut tmp[i], read_volatile(&buf[src + i])) };
        }
        for i in 0..n {
            unsafe { write_volatile(&mut buf[dst + i], read_volatile(&tmp[i])) };
        }
    }

    fn oracle_cmp(a: &[u8], b: &[u8]) -> i32 {
        for i in 0..a.len() {
            let (x, y) = unsafe { (read_volatile(&a[i]), read_volatile(&b[i])) };
            if x != y {
                return if x < y { -1 } else { 1 };
            }
        }
        0
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn copies_like_a_byte_loop(data in proptest::collection::vec(any::<u8>(), 600), src in 0usize..300, dst in 0usize..300, n in 0usize..300) {
            // memcpy: distinct buffers.
            let mut want = vec![0xa5u8; 600];
            let mut got = want.clone();
            for i in 0..n {
                unsafe { write_volatile(&mut want[dst + i], read_volatile(&data[src + i])) };
            }
            let r = unsafe { memcpy(got.as_mut_ptr().add(dst), data.as_ptr().add(src), n) };
            prop_assert_eq!(r, unsafe { got.as_mut_ptr().add(dst) });
            prop_assert!(oracle_cmp(&got, &want) == 0, "memcpy src {} dst {} n {}", src, dst, n);
            // memmove: one buffer, overlapping either way.
            let mut want = data.clone();
            let mut got = data.clone();
            oracle_move(&mut want, src, dst, n);
            unsafe { memmove(got.as_mut_ptr().add(dst), got.as_ptr().add(src), n) };
            prop_assert!(oracle_cmp(&got, &want) == 0, "memmove src {} dst {} n {}", src, dst, n);
        }

        #[test]
        fn compares_like_a_byte_loop(a in proptest::collection::vec(any::<u8>(), 0..200), flip in any::<(usize, u8)>(), equal_prefix in any::<bool>()) {
            // Mostly equal buffers, differing (if at all) at one byte: the interesting case.
            let mut b = a.clone();
            if !b.is_empty() && !equal_prefix {
                let i = flip.0 % b.len();
                b[i] = flip.1;
            }
            let want = oracle_cmp(&a, &b);
            let got = unsafe { memcmp(a.as_ptr(), b.as_ptr(), a.len()) };
            prop_assert_eq!(got.signum(), want, "{:?} {:?}", a, b);
            prop_assert_eq!(unsafe { bcmp(a.as_ptr(), b.as_ptr(), a.len()) } != 0, want != 0);
        }
    }

    #[test]
    fn every_small_length_and_offset() {
        // Exhaustive where the branches are: lengths 0..=70, every alignment, both directions.
        let data: Vec<u8> = (0..200u8).collect();
        for n in 0..=70 {
            for src in 0..20 {
                for dst in 0..20 {
                    let mut want = data.clone();
                    let mut got = data.clone();
                    oracle_move(&mut want, src, dst, n);
                    unsafe { memmove(got.as_mut_ptr().add(dst), got.as_ptr().add(src), n) };
                    assert!(oracle_cmp(&got, &want) == 0, "memmove src {src} dst {dst} n {n}");
                }
            }
            for at in 0..n {
                let mut b = data[..n].to_vec();
                b[at] ^= 0x80;
                let c = unsafe { memcmp(data.as_ptr(), b.as_ptr(), n) };
                assert_eq!(c.signum(), oracle_cmp(&data[..n], &b), "n {n} at {at}");
            }
        }
    }
}
