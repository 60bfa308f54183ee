//! A map keyed by pid with a multiplicative hash instead of SipHash: a repeated slot round
//! looks up every kept pid two or three times (6,000 zombies: ~15,000 lookups a table
//! round, `HashMap::get` and `hash_one` a fifth of its profile), and a reading indexes every
//! process of the table by pid and by parent (`ProcessTable`). Live pids are assigned by
//! the kernel, not chosen by whoever fills the table, so the flooding SipHash guards
//! against cannot be aimed at a live round. A `--snapshot` file or a `--proc-root` tree can
//! choose them: pids crafted to share their low bits (the low bits of the product depend
//! only on the pid's low bits) make indexing that table quadratic, slow but never wrong,
//! and only for whoever supplied it.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

pub type PidMap<V> = HashMap<i32, V, BuildHasherDefault<PidHasher>>;

/// Fibonacci hashing of the one `i32` a pid key writes: the odd multiplier is a bijection
/// on the low bits (distinct buckets for consecutive pids) and spreads them into the high
/// bits (hashbrown's tag byte).
#[derive(Debug, Default)]
pub struct PidHasher(u64);

const K: u64 = 0x9E37_79B9_7F4A_7C15;

impl Hasher for PidHasher {
    fn write_i32(&mut self, pid: i32) {
        self.0 = (self.0 ^ u64::from(pid as u32)).wrapping_mul(K);
    }

    /// Any other key type: each byte in turn (unused by `PidMap`, correct regardless).
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Consecutive pids land in distinct buckets of a small table, and differ in the tag
    /// bits: a hash that kept only the low bits, or only the high, would fail one of them.
    #[test]
    fn consecutive_pids_spread_over_buckets_and_tags() {
        let b = BuildHasherDefault::<PidHasher>::default();
        let hashes: Vec<u64> = (1000..1256).map(|p: i32| b.hash_one(p)).collect();
        let mut buckets: Vec<u64> = hashes.iter().map(|h| h & 255).collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert_eq!(buckets.len(), 256, "a bijection on the low bits");
        let mut tags: Vec<u64> = hashes.iter().map(|h| h >> 57).collect();
        tags.sort_unstable();
        tags.dedup();
        assert!(tags.len() > 64, "tags spread: {}", tags.len());
        let mut m: PidMap<i32> = PidMap::default();
        for p in 0..5000 {
            m.insert(p, -p);
        }
        assert!((0..5000).all(|p| m.get(&p) == Some(&-p)));
    }
}
