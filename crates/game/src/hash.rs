//! The two integer hashes the project uses, each written once: SplitMix64's finaliser (seeds to
//! keys, deal numbers to samples, seeds mixed with seeds) and 64-bit FNV-1a (fingerprints of
//! text). Both are frozen: records and stream keys depend on their exact output.

/// SplitMix64's output function of `x` (Steele, Lea and Flood 2014): a bijection of `u64` that
/// sends nearby inputs far apart.
#[inline]
pub fn splitmix64_mix(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64's golden-ratio increment.
pub const SPLITMIX64_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// One step of the SplitMix64 generator: advances `state` and returns the next word.
#[inline]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(SPLITMIX64_GAMMA);
    splitmix64_mix(*state)
}

/// 64-bit FNV-1a of `bytes`.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference values: SplitMix64 seeded with 0 (the generator's published first outputs)
    /// and FNV-1a of "" and "a".
    #[test]
    fn known_values() {
        let mut s = 0;
        assert_eq!(splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
