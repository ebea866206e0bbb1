//! fio's verify header and the checksums after it: the bytes at the start of every verify
//! interval of a block written with `verify=`, laid out as fio 3.x lays them out, so a file
//! written by ioslice verifies under fio and the other way round.
//!
//! The layout, little-endian, 40 bytes:
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 2 | magic, `0xacca` |
//! | 2 | 2 | verify type (fio's numbering: md5 2, crc32c 5, sha256 9, xxhash 15) |
//! | 4 | 4 | length of the interval the header covers |
//! | 8 | 8 | the block's random seed (what its data was generated from) |
//! | 16 | 8 | the interval's offset in the file |
//! | 24 | 4 + 4 | when it was written: seconds and nanoseconds since the job started |
//! | 32 | 2 | the writing job's thread number |
//! | 34 | 2 | the block's write number in its job (`numberio`, wrapping) |
//! | 36 | 4 | crc32c of bytes 0–35 |
//!
//! The checksum of the interval's data follows (4 bytes for crc32c and xxhash, 16 for md5, a
//! 64-byte field for sha256), then the data up to the interval's end. fio's crc32c is the
//! Castagnoli CRC without its final inversion, and its xxhash the 32-bit xxHash with seed 1.
//!
//! Pure functions on byte slices, called by a job's thread on its own buffers.

use ioslice_fio::verify::VerifyKind;
use md5::{Digest, Md5};
use sha2::Sha256;

/// fio's verify header magic.
pub(crate) const MAGIC: u16 = 0xacca;
/// Bytes of the header before the checksum.
pub(crate) const HEADER_LEN: usize = 40;
/// Offset of the header's own crc32c (what it covers ends there).
const HEADER_CRC_AT: usize = 36;

/// The header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) magic: u16,
    pub(crate) verify_type: u16,
    pub(crate) len: u32,
    pub(crate) rand_seed: u64,
    pub(crate) offset: u64,
    pub(crate) time_sec: u32,
    pub(crate) time_nsec: u32,
    pub(crate) thread: u16,
    pub(crate) numberio: u16,
    pub(crate) crc: u32,
}

impl Header {
    /// Write the header (its crc computed here) into `out[..HEADER_LEN]`.
    pub(crate) fn write(&self, out: &mut [u8]) {
        out[0..2].copy_from_slice(&self.magic.to_le_bytes());
        out[2..4].copy_from_slice(&self.verify_type.to_le_bytes());
        out[4..8].copy_from_slice(&self.len.to_le_bytes());
        out[8..16].copy_from_slice(&self.rand_seed.to_le_bytes());
        out[16..24].copy_from_slice(&self.offset.to_le_bytes());
        out[24..28].copy_from_slice(&self.time_sec.to_le_bytes());
        out[28..32].copy_from_slice(&self.time_nsec.to_le_bytes());
        out[32..34].copy_from_slice(&self.thread.to_le_bytes());
        out[34..36].copy_from_slice(&self.numberio.to_le_bytes());
        let crc = fio_crc32c(&out[..HEADER_CRC_AT]);
        out[36..40].copy_from_slice(&crc.to_le_bytes());
    }

    /// The header at the start of `bytes` (at least [`HEADER_LEN`] long).
    pub(crate) fn read(bytes: &[u8]) -> Self {
        let u16_at = |at: usize| u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let u32_at = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let u64_at = |at: usize| u64::from(u32_at(at)) | (u64::from(u32_at(at + 4)) << 32);
        Self {
            magic: u16_at(0),
            verify_type: u16_at(2),
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            numberio: u16_at(34),
            crc: u32_at(36),
        }
    }

    /// The crc32c of the header's first 36 bytes as they are in `bytes`.
    pub(crate) fn computed_crc(bytes: &[u8]) -> u32 {
        fio_crc32c(&bytes[..HEADER_CRC_AT])
    }
}

/// fio's crc32c: the Castagnoli CRC without the final inversion.
fn fio_crc32c(bytes: &[u8]) -> u32 {
    !crc32c::crc32c(bytes)
}

/// fio's number for a verify kind in the header; `None` for kinds without a header.
pub(crate) fn type_number(kind: &VerifyKind) -> Option<u16> {
    match kind {
        VerifyKind::Md5 => Some(2),
        VerifyKind::Crc32c => Some(5),
        VerifyKind::Sha256 => Some(9),
        VerifyKind::Xxhash => Some(15),
        VerifyKind::Pattern | VerifyKind::Unsupported(_) => None,
    }
}

/// Bytes the kind's checksum field takes after the header.
pub(crate) fn checksum_len(kind: &VerifyKind) -> usize {
    match kind {
        VerifyKind::Crc32c | VerifyKind::Xxhash => 4,
        VerifyKind::Md5 => 16,
        VerifyKind::Sha256 => 64,
        VerifyKind::Pattern | VerifyKind::Unsupported(_) => 0,
    }
}

/// Bytes before an interval's data: the header and the checksum field.
pub(crate) fn prefix_len(kind: &VerifyKind) -> usize {
    HEADER_LEN + checksum_len(kind)
}

/// The checksum field of `kind` for `data`, as fio stores it ([`checksum_len`] bytes).
pub(crate) fn checksum(kind: &VerifyKind, data: &[u8]) -> Vec<u8> {
    match kind {
        VerifyKind::Crc32c => fio_crc32c(data).to_le_bytes().to_vec(),
        VerifyKind::Xxhash => xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes().to_vec(),
        VerifyKind::Md5 => Md5::digest(data).to_vec(),
        VerifyKind::Sha256 => {
            let mut field = Sha256::digest(data).to_vec();
            field.resize(64, 0);
            field
        }
        VerifyKind::Pattern | VerifyKind::Unsupported(_) => Vec::new(),
    }
}

/// A checksum field as fio prints it after "Expected CRC:": its bytes in hex, in the order
/// they are stored.
pub(crate) fn checksum_text(field: &[u8]) -> String {
    field.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header() -> Header {
        Header {
            magic: MAGIC,
            verify_type: 5,
            len: 4096,
            rand_seed: 0x00a4_cc01_c509_543c,
            offset: 8192,
            time_sec: 1,
            time_nsec: 2,
            thread: 1,
            numberio: 2,
            crc: 0,
        }
    }

    #[test]
    fn a_header_reads_back_as_written_with_its_crc() {
        let mut bytes = [0u8; HEADER_LEN];
        header().write(&mut bytes);
        let read = Header::read(&bytes);
        assert_eq!(read.crc, Header::computed_crc(&bytes));
        assert_eq!(Header { crc: 0, ..read }, header());
        assert_eq!(&bytes[..2], &[0xca, 0xac], "magic as fio writes it");
    }

    #[test]
    fn fio_crc32c_is_the_castagnoli_crc_uninverted() {
        // crc32c("123456789") is 0xe3069283.
        assert_eq!(fio_crc32c(b"123456789"), !0xe306_9283);
    }
}
