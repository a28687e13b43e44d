//! CRC-32 (IEEE 802.3, reflected: the one of zlib and Python's `zlib.crc32`), eight
//! bytes a step: the row words of protocol 2's digest (`delta`).

/// CRC-32 (IEEE 802.3, reflected, the one of zlib and Python's `zlib.crc32`).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32_update(0, bytes)
}

/// The CRC-32 of the bytes hashed into `crc` followed by `bytes` (zlib's
/// `crc32(bytes, crc)`): 64 bytes a step by carry-less multiplication where the CPU has
/// it (x86-64 `pclmulqdq`, checked once at run time), else eight bytes a step
/// (slicing-by-8). Both give the same value (tested on every length around the steps).
pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    if bytes.len() >= fold::FOLD_BYTES_MIN && fold::available() {
        return fold::crc32_update(crc, bytes);
    }
    crc32_update_sliced(crc, bytes)
}

/// [`crc32_update`] eight bytes a step (slicing-by-8), on any CPU.
fn crc32_update_sliced(crc: u32, bytes: &[u8]) -> u32 {
    const T: [[u32; 256]; 8] = crc32_tables();
    let mut crc = !crc;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let lo = crc ^ u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        crc = T[7][(lo & 0xff) as usize]
            ^ T[6][((lo >> 8) & 0xff) as usize]
            ^ T[5][((lo >> 16) & 0xff) as usize]
            ^ T[4][(lo >> 24) as usize]
            ^ T[3][c[4] as usize]
            ^ T[2][c[5] as usize]
            ^ T[1][c[6] as usize]
            ^ T[0][c[7] as usize];
    }
    for &b in chunks.remainder() {
        crc = T[0][((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    !crc
}

/// The bytewise CRC-32 table (`[0]`) and the seven tables of slicing-by-8: `[k][i]` is
/// the CRC of byte `i` followed by `k` zero bytes.
const fn crc32_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                0xedb8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut i = 0;
        while i < 256 {
            let prev = t[k - 1][i];
            t[k][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            i += 1;
        }
        k += 1;
    }
    t
}

/// CRC-32 by folding 16-byte blocks with carry-less multiplication (Gopal et al., "Fast
/// CRC Computation for Generic Polynomials Using PCLMULQDQ Instruction", Intel 2009), in
/// the bit-reflected form zlib's CRC-32 is, with the folding constants of that paper
/// for the IEEE polynomial, then a Barrett reduction to 32 bits. Bytes past the last
/// whole block go through the sliced tables.
#[cfg(target_arch = "x86_64")]
mod fold {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_clmulepi64_si128, _mm_cvtsi32_si128, _mm_extract_epi32,
        _mm_loadu_si128, _mm_set_epi32, _mm_set_epi64x, _mm_srli_si128, _mm_xor_si128,
    };
    use std::sync::OnceLock;

    /// Shortest input folded: four blocks to start and the fold by four once; below it
    /// the tables are as fast.
    pub const FOLD_BYTES_MIN: usize = 128;

    /// x^(4*128+64) and x^(4*128) mod P (reflected, shifted one bit): fold by four.
    const K1: i64 = 0x1_5444_2bd4;
    const K2: i64 = 0x1_c6e4_1596;
    /// x^(128+64) and x^128 mod P: fold by one.
    const K3: i64 = 0x1_7519_97d0;
    const K4: i64 = 0x0_ccaa_009e;
    /// x^64 mod P: 96 bits to 64.
    const K5: i64 = 0x1_63cd_6124;
    /// P itself and μ = floor(x^64 / P), reflected: the Barrett reduction.
    const P_X: i64 = 0x1_DB71_0641;
    const U_PRIME: i64 = 0x1_F701_1641;

    /// Whether this CPU has `pclmulqdq` and SSE4.1 (looked up once).
    pub fn available() -> bool {
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::arch::is_x86_feature_detected!("pclmulqdq")
                && std::arch::is_x86_feature_detected!("sse4.1")
        })
    }

    /// [`super::crc32_update`] of at least [`FOLD_BYTES_MIN`] bytes; the caller checked
    /// [`available`].
    pub fn crc32_update(crc: u32, bytes: &[u8]) -> u32 {
        debug_assert!(bytes.len() >= FOLD_BYTES_MIN && available());
        // SAFETY: the CPU features `folded` is compiled for were detected at run time
        // (`available`), and it reads `bytes` only through bounds-checked slices.
        unsafe { folded(crc, bytes) }
    }

    #[target_feature(enable = "pclmulqdq", enable = "sse2", enable = "sse4.1")]
    unsafe fn folded(crc: u32, mut data: &[u8]) -> u32 {
        let mut x3 = block(&mut data);
        let mut x2 = block(&mut data);
        let mut x1 = block(&mut data);
        let mut x0 = block(&mut data);
        x3 = _mm_xor_si128(x3, _mm_cvtsi32_si128(!crc as i32));
        let k1k2 = _mm_set_epi64x(K2, K1);
        while data.len() >= 64 {
            x3 = fold_into(x3, block(&mut data), k1k2);
            x2 = fold_into(x2, block(&mut data), k1k2);
            x1 = fold_into(x1, block(&mut data), k1k2);
            x0 = fold_into(x0, block(&mut data), k1k2);
        }
        let k3k4 = _mm_set_epi64x(K4, K3);
        let mut x = fold_into(x3, x2, k3k4);
        x = fold_into(x, x1, k3k4);
        x = fold_into(x, x0, k3k4);
        while data.len() >= 16 {
            x = fold_into(x, block(&mut data), k3k4);
        }
        // 128 bits to 96, then to 64.
        let x = _mm_xor_si128(_mm_clmulepi64_si128(x, k3k4, 0x10), _mm_srli_si128(x, 8));
        let low32 = _mm_set_epi32(0, 0, 0, !0);
        let x = _mm_xor_si128(
            _mm_clmulepi64_si128(_mm_and_si128(x, low32), _mm_set_epi64x(0, K5), 0x00),
            _mm_srli_si128(x, 4),
        );
        // Barrett reduction, 64 bits to 32 (the reflected form keeps the upper half).
        let pu = _mm_set_epi64x(U_PRIME, P_X);
        let t1 = _mm_clmulepi64_si128(_mm_and_si128(x, low32), pu, 0x10);
        let t2 = _mm_clmulepi64_si128(_mm_and_si128(t1, low32), pu, 0x00);
        let c = _mm_extract_epi32(_mm_xor_si128(x, t2), 1) as u32;
        super::crc32_update_sliced(!c, data)
    }

    /// `a` folded forward over 128 bits by `keys` and added to `b`.
    #[target_feature(enable = "pclmulqdq", enable = "sse2")]
    unsafe fn fold_into(a: __m128i, b: __m128i, keys: __m128i) -> __m128i {
        let lo = _mm_clmulepi64_si128(a, keys, 0x00);
        let hi = _mm_clmulepi64_si128(a, keys, 0x11);
        _mm_xor_si128(_mm_xor_si128(b, lo), hi)
    }

    /// The next 16 bytes of `data` as one block (the caller checked there are 16).
    #[target_feature(enable = "sse2")]
    unsafe fn block(data: &mut &[u8]) -> __m128i {
        let (head, rest) = data.split_at(16);
        *data = rest;
        // SAFETY: `head` is 16 readable bytes; the load is unaligned.
        unsafe { _mm_loadu_si128(head.as_ptr().cast::<__m128i>()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32_is_the_zlib_one() {
        assert_eq!(crc32(b"123456789"), 0xcbf4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32_update(crc32(b"1234"), b"56789"), 0xcbf4_3926);
        // Every length around the 8-byte steps, against the bytewise definition.
        let bytes: Vec<u8> = (0..100u32).map(|i| (i * 37 + 11) as u8).collect();
        for n in 0..bytes.len() {
            let bytewise = !bytes[..n].iter().fold(!0u32, |crc, &b| {
                (0..8).fold(crc ^ u32::from(b), |c, _| {
                    if c & 1 != 0 {
                        0xedb8_8320 ^ (c >> 1)
                    } else {
                        c >> 1
                    }
                })
            });
            assert_eq!(crc32(&bytes[..n]), bytewise, "{n} bytes");
        }
    }

    const ZLIB_A200: u32 = 0x599a_f058;

    /// The folded CRC is the sliced one: every length around its blocks and its fold by
    /// four, from several starting values.
    #[test]
    fn the_folded_crc_is_the_sliced_one() {
        let bytes: Vec<u8> = (0..1500u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for n in (0..400).chain([1023, 1024, 1025, 1500]) {
            for start in [0u32, 1, 0xdead_beef, u32::MAX] {
                assert_eq!(
                    crc32_update(start, &bytes[..n]),
                    crc32_update_sliced(start, &bytes[..n]),
                    "{n} bytes from {start:#x}"
                );
            }
        }
        // python3 -c 'import zlib; print(hex(zlib.crc32(b"a" * 200)))'
        assert_eq!(crc32(&[b'a'; 200]), ZLIB_A200);
    }
}
