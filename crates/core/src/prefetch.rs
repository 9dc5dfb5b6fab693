//! Software prefetch: a hint that a slice element will be read or written soon.
//!
//! The FTL's mapping tables are indexed by random logical pages; each lookup is a cache miss
//! that stalls the simulator. Knowing the next host request a few events ahead, the controller
//! asks the CPU to bring the entry in while it processes those events. A prefetch never faults
//! and has no observable effect besides timing, so simulation results do not depend on it.

/// Hints that `slice[index]` will be accessed soon. Out-of-range indices are ignored; on
/// targets without a stable prefetch instruction this does nothing.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], index: usize) {
    if index < slice.len() {
        prefetch_ptr(slice[index..].as_ptr().cast());
    }
}

/// Hints that the bytes just before `slice` will be accessed soon: the reference counts of an
/// `Arc<[T]>` (`&*arc`), which a clone touches, lie there.
#[inline(always)]
pub fn prefetch_header<T>(slice: &[T]) {
    prefetch_ptr(slice.as_ptr().cast::<i8>().wrapping_sub(16));
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
#[allow(unsafe_code)]
fn prefetch_ptr(ptr: *const i8) {
    use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
    // SAFETY: `prefetch` is SSE, part of the x86_64 baseline; PREFETCHT0 is a hint that never
    // faults and does not read memory observably, and `ptr` points into a live slice anyway.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(ptr) }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn prefetch_ptr(_ptr: *const i8) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetch_in_and_out_of_range_is_harmless() {
        let v = vec![7u32; 1000];
        prefetch(&v, 0);
        prefetch(&v, 999);
        prefetch(&v, 1000);
        prefetch(&v, usize::MAX);
        let empty: [u64; 0] = [];
        prefetch(&empty, 0);
        prefetch_header(&v);
        prefetch_header(&empty);
        assert_eq!(v[999], 7);
    }
}
