//! The checksums of `verify=`, each from a crate made for it, laid out in the header as fio
//! 3.33 lays them out (its `vhdr_*` structs), and `--crctest`.
//!
//! fio's conventions, checked against blocks fio 3.33 wrote: crc32 is the CRC-32 polynomial MSB first with
//! no initial value or inversion, crc32c
//! CRC-32C without its final inversion; crc64 is Jones' polynomial
//! (0xad93d23594c935a9), reflected, with no inversion (the catalogue's CRC-64/REDIS); crc16
//! is CRC-16/ARC; crc7 is the MMC CRC-7 without its final shift; xxhash is XXH32 seeded with 1;
//! md5 and the SHAs are the
//! standard digests, sha1 stored as five little-endian words. Multi-byte sums are stored little-endian (fio
//! stores its integers in host order).

use crc::{Algorithm, Crc, Table, CRC_16_ARC, CRC_64_REDIS};
use md5::Digest;

/// fio's crc32: the CRC-32 polynomial MSB first, initial value and final XOR zero.
const CRC_32_FIO: Algorithm<u32> = Algorithm {
    width: 32,
    poly: 0x04c1_1db7,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0,
    residue: 0,
};
/// fio's crc7 (Linux's old crc7): polynomial 0x09, MSB first, initial value zero.
const CRC_7_FIO: Algorithm<u8> = Algorithm {
    width: 7,
    poly: 0x09,
    init: 0,
    refin: false,
    refout: false,
    xorout: 0,
    check: 0,
    residue: 0,
};

static CRC64: Crc<u64, Table<16>> = Crc::<u64, Table<16>>::new(&CRC_64_REDIS);
static CRC32: Crc<u32, Table<16>> = Crc::<u32, Table<16>>::new(&CRC_32_FIO);
static CRC16: Crc<u16, Table<16>> = Crc::<u16, Table<16>>::new(&CRC_16_ARC);
// Slice-by-16 tables: 16 lookups in flight instead of one byte at a time.
static CRC7: Crc<u8, Table<16>> = Crc::<u8, Table<16>>::new(&CRC_7_FIO);

/// fio's crc32c: CRC-32C without the final inversion (what fio 3.33 stores, in the header
/// and as the `crc32c` sum).
pub fn fio_crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

/// fio 3.33's sha256 field, which is not a SHA-256 digest: fio appends the message length
/// little-endian, and its final step stores each state word into one byte, over the padded
/// last block it keeps in the same 64 bytes. Both tools compare all 64 bytes.
fn fio_sha256(data: &[u8], out: &mut [u8]) {
    const H0: [u32; 8] = [
        0x6a09_e667,
        0xbb67_ae85,
        0x3c6e_f372,
        0xa54f_f53a,
        0x510e_527f,
        0x9b05_688c,
        0x1f83_d9ab,
        0x5be0_cd19,
    ];
    let mut state = H0;
    let whole = data.len() / 64 * 64;
    let block = |c: &[u8]| *sha2::digest::generic_array::GenericArray::from_slice(c);
    for c in data[..whole].chunks_exact(64) {
        sha2::compress256(&mut state, &[block(c)]);
    }
    let tail = &data[whole..];
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let end = if tail.len() < 56 { 64 } else { 128 };
    let bits = u64::from(data.len() as u32) * 8;
    last[end - 8..end].copy_from_slice(&bits.to_le_bytes());
    for c in last[..end].chunks_exact(64) {
        sha2::compress256(&mut state, &[block(c)]);
    }
    out[..64].copy_from_slice(&last[end - 64..end]);
    for (o, w) in out.iter_mut().zip(state) {
        *o = w as u8;
    }
}

/// A checksum of `verify=` (the types that put a sum after the header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sum {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc16,
    Crc7,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    Sha1,
}

impl Sum {
    /// Every checksum, in fio's `--crctest` order.
    pub const ALL: [Sum; 14] = [
        Sum::Md5,
        Sum::Crc64,
        Sum::Crc32,
        Sum::Crc32c,
        Sum::Crc16,
        Sum::Crc7,
        Sum::Sha1,
        Sum::Sha256,
        Sum::Sha512,
        Sum::Xxhash,
        Sum::Sha3_224,
        Sum::Sha3_256,
        Sum::Sha3_384,
        Sum::Sha3_512,
    ];

    /// fio's name.
    pub fn name(self) -> &'static str {
        match self {
            Sum::Md5 => "md5",
            Sum::Crc64 => "crc64",
            Sum::Crc32 => "crc32",
            Sum::Crc32c => "crc32c",
            Sum::Crc16 => "crc16",
            Sum::Crc7 => "crc7",
            Sum::Sha256 => "sha256",
            Sum::Sha512 => "sha512",
            Sum::Sha3_224 => "sha3-224",
            Sum::Sha3_256 => "sha3-256",
            Sum::Sha3_384 => "sha3-384",
            Sum::Sha3_512 => "sha3-512",
            Sum::Xxhash => "xxhash",
            Sum::Sha1 => "sha1",
        }
    }

    /// fio's verify_type number (its `VERIFY_*` enum).
    pub fn code(self) -> u16 {
        match self {
            Sum::Md5 => 2,
            Sum::Crc64 => 3,
            Sum::Crc32 => 4,
            Sum::Crc32c => 5,
            Sum::Crc16 => 7,
            Sum::Crc7 => 8,
            Sum::Sha256 => 9,
            Sum::Sha512 => 10,
            Sum::Sha3_224 => 11,
            Sum::Sha3_256 => 12,
            Sum::Sha3_384 => 13,
            Sum::Sha3_512 => 14,
            Sum::Xxhash => 15,
            Sum::Sha1 => 16,
        }
    }

    /// Bytes of the sum's field after the header (fio's `sizeof(struct vhdr_*)`).
    pub fn field(self) -> usize {
        match self {
            Sum::Md5 => 16,
            Sum::Crc64 => 8,
            Sum::Crc32 | Sum::Crc32c | Sum::Xxhash => 4,
            Sum::Crc16 => 2,
            Sum::Crc7 => 1,
            Sum::Sha256 => 64,
            Sum::Sha512 => 128,
            Sum::Sha3_224 => 28,
            Sum::Sha3_256 => 32,
            Sum::Sha3_384 => 48,
            Sum::Sha3_512 => 64,
            Sum::Sha1 => 20,
        }
    }

    /// Bytes of the sum itself (what is compared; sha256 and sha512 leave half the field).
    pub fn sum_len(self) -> usize {
        match self {
            Sum::Sha512 => 64,
            s => s.field(),
        }
    }

    /// Writes the sum of `data` into `out` (at least [`Sum::len`] bytes).
    pub fn compute(self, data: &[u8], out: &mut [u8]) {
        let n = self.sum_len();
        match self {
            Sum::Crc32c => out[..n].copy_from_slice(&fio_crc32c(data).to_le_bytes()),
            Sum::Crc32 => out[..n].copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
            Sum::Crc64 => out[..n].copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
            Sum::Crc16 => out[..n].copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
            Sum::Crc7 => out[0] = CRC7.checksum(data),
            Sum::Xxhash => {
                let h = xxhash_rust::xxh32::xxh32(data, 1);
                out[..n].copy_from_slice(&h.to_le_bytes());
            }
            Sum::Md5 => out[..n].copy_from_slice(&md5::Md5::digest(data)),
            Sum::Sha1 => {
                // fio keeps sha1 as five 32-bit words in host order, not the digest's bytes.
                let d = sha1::Sha1::digest(data);
                for (o, w) in out[..n].chunks_exact_mut(4).zip(d.chunks_exact(4)) {
                    o.copy_from_slice(&[w[3], w[2], w[1], w[0]]);
                }
            }
            Sum::Sha256 => fio_sha256(data, &mut out[..64]),
            Sum::Sha512 => out[..n].copy_from_slice(&sha2::Sha512::digest(data)),
            Sum::Sha3_224 => out[..n].copy_from_slice(&sha3::Sha3_224::digest(data)),
            Sum::Sha3_256 => out[..n].copy_from_slice(&sha3::Sha3_256::digest(data)),
            Sum::Sha3_384 => out[..n].copy_from_slice(&sha3::Sha3_384::digest(data)),
            Sum::Sha3_512 => out[..n].copy_from_slice(&sha3::Sha3_512::digest(data)),
        }
    }
}

/// One line of `--crctest`: a checksum's throughput over a buffer summed again and again.
#[derive(Clone, Debug)]
pub struct CrcRate {
    pub sum: Sum,
    /// MiB/s.
    pub mib_s: f64,
    pub usec: u64,
}

/// fio's `--crctest[=list]`: each named checksum (all when `only` is empty) over a 1 MiB
/// buffer of random bytes, repeated for about a fixed amount of data, as fio times them.
pub fn crctest(only: &[Sum]) -> Vec<CrcRate> {
    const BUF: usize = 1 << 20;
    const ROUNDS: usize = 64;
    let mut buf = vec![0u8; BUF];
    super::fill_random(&mut buf, 0x5eed);
    let mut out = [0u8; 64];
    let list: Vec<Sum> = if only.is_empty() {
        Sum::ALL.to_vec()
    } else {
        only.to_vec()
    };
    list.into_iter()
        .map(|sum| {
            let t = std::time::Instant::now();
            for _ in 0..ROUNDS {
                sum.compute(std::hint::black_box(&buf), &mut out);
            }
            let secs = t.elapsed().as_secs_f64().max(1e-9);
            CrcRate {
                sum,
                mib_s: (BUF * ROUNDS) as f64 / (1 << 20) as f64 / secs,
                usec: (secs * 1e6) as u64,
            }
        })
        .collect()
}

/// `--crctest[=list]` as fio prints it: one line per checksum, its name and MiB/sec (fio
/// also times its internal hashes murmur3, jhash and fnv, which no verify type uses).
pub fn crctest_text(list: Option<&str>) -> Result<String, String> {
    let mut only = Vec::new();
    for name in list
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        let sum = Sum::ALL
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| format!("--crctest: unknown checksum '{name}'"))?;
        only.push(*sum);
    }
    Ok(crctest(&only)
        .iter()
        .map(|r| {
            let name = r.sum.name();
            let pad = if name.len() < 7 { "\t" } else { "" };
            format!("{name}:\t{pad}{:8.2} MiB/sec\n", r.mib_s)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_have_their_standard_check_values() {
        let check = |s: Sum| {
            let mut o = [0u8; 64];
            s.compute(b"123456789", &mut o);
            o[..s.sum_len()].to_vec()
        };
        assert_eq!(check(Sum::Crc32c), (!0xe306_9283u32).to_le_bytes());
        assert_eq!(check(Sum::Crc32), 0x89a1_897fu32.to_le_bytes());
        assert_eq!(check(Sum::Crc16), 0xbb3du16.to_le_bytes());
        assert_eq!(check(Sum::Md5)[..4], [0x25, 0xf9, 0xe7, 0x94]);
        assert!(Sum::ALL.iter().all(|s| s.sum_len() <= s.field()));
    }
}
