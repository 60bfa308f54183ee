//! Byte searches for the reader, with the vector instructions every CPU of the target has
//! (SSE2 on x86_64, NEON on aarch64) and memchr's portable word-at-a-time search elsewhere.
//! memchr's top-level functions would choose AVX2 at run time instead, and that one-off CPU
//! probe (`cpuid`, which traps under virtualisation) measured at about 50 µs per process:
//! more than judging a whole log tail in a fresh `log-probe`.

#[cfg(target_arch = "aarch64")]
use memchr::arch::aarch64::neon::memchr as simd;
use memchr::arch::all::memchr as portable;
#[cfg(target_arch = "x86_64")]
use memchr::arch::x86_64::sse2::memchr as simd;

/// The last `needle` in `hay`.
pub(super) fn rfind(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(s) = simd::One::new(needle) {
        return s.rfind(hay);
    }
    portable::One::new(needle).rfind(hay)
}

/// The first `needle` in `hay`.
pub(super) fn find(needle: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(s) = simd::One::new(needle) {
        return s.find(hay);
    }
    portable::One::new(needle).find(hay)
}

/// The first of any of three bytes in `hay`.
pub(super) fn find3(n1: u8, n2: u8, n3: u8, hay: &[u8]) -> Option<usize> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    if let Some(s) = simd::Three::new(n1, n2, n3) {
        return s.find(hay);
    }
    portable::Three::new(n1, n2, n3).find(hay)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_plain_searches() {
        let hay: Vec<u8> = (0..300u32).map(|i| (i * 37 % 251) as u8).collect();
        for n in [0u8, b'\n', b'_', 7, 250, 255] {
            for end in [0, 1, 15, 16, 17, 31, 32, 33, 64, 299, 300] {
                let h = &hay[..end];
                assert_eq!(rfind(n, h), h.iter().rposition(|&b| b == n));
                assert_eq!(find(n, h), h.iter().position(|&b| b == n));
                assert_eq!(
                    find3(n, b'_', b'[', h),
                    h.iter().position(|&b| b == n || b == b'_' || b == b'[')
                );
            }
        }
    }
}
