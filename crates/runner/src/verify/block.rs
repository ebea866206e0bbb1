//! One block's contents under `verify=`: filling a write's buffer (headers, checksums, data
//! from the block's seed or `verify_pattern`) and checking a buffer read back, with the
//! failure described as fio describes it.
//!
//! Pure functions on a job's own buffers, called by that job's thread.

use ioslice_fio::verify::{VerifyKind, VerifyPattern, VerifySpec};

use super::header::{self, Header, HEADER_LEN, MAGIC};

/// How a job lays out its blocks.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) kind: VerifyKind,
    /// `verify_interval` (0: each block is one interval).
    interval: u64,
    /// `verify_pattern` (empty: data from the block's seed).
    pattern: VerifyPattern,
}

/// What a block written with verify holds: the values in its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Written {
    /// Index of the file among the job's files.
    pub(crate) file: usize,
    pub(crate) offset: u64,
    pub(crate) length: u64,
    pub(crate) seed: u64,
    pub(crate) numberio: u16,
}

/// The writer's stamp in each header.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamp {
    pub(crate) thread: u16,
    /// Nanoseconds since the job started.
    pub(crate) elapsed: u64,
}

/// What a block read back must hold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Expect {
    pub(crate) offset: u64,
    pub(crate) length: u64,
    /// The seed and write number, when this run wrote the block (fio checks them then only).
    pub(crate) written: Option<(u64, u16)>,
}

/// A verify failure in one interval of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Failure {
    /// Offset of the interval that failed.
    pub(crate) at: u64,
    /// Its length.
    pub(crate) len: u64,
    pub(crate) problem: Problem,
}

/// What was wrong, with what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Problem {
    /// A header field differs (`magic`, `length`, `offset`, `rand_seed`, `numberio`, `crc`).
    Header {
        field: &'static str,
        found: String,
        wanted: String,
    },
    /// The header names another verify type.
    TypeMismatch { media: u16, given: u16 },
    /// The data's checksum differs from the header's.
    Checksum { expected: String, received: String },
    /// `verify=pattern`: the first byte that differs, at `offset` in the block.
    Pattern { offset: u64, got: u8, wanted: u8 },
}

impl Failure {
    /// The failure in fio's words, naming `file` and the requested block.
    pub(crate) fn message(&self, kind: &VerifyKind, file: &str, expect: &Expect) -> String {
        let place = format!(
            "at file {file} offset {}, length {} (requested block: offset={}, length={})",
            self.at, self.len, expect.offset, expect.length
        );
        match &self.problem {
            Problem::Header {
                field,
                found,
                wanted,
            } => {
                let verb = if *field == "crc" { "calculated" } else { "wanted" };
                format!("verify: bad header {field} {found}, {verb} {wanted} {place}")
            }
            Problem::TypeMismatch { media, given } => {
                format!("fio: verify type mismatch ({media} media, {given} given) {place}")
            }
            Problem::Checksum { expected, received } => format!(
                "{}: verify failed {place}\n       Expected CRC: {expected}\n       Received CRC: {received}",
                kind.fio_name()
            ),
            Problem::Pattern {
                offset,
                got,
                wanted,
            } => format!(
                "fio: got pattern '{got:02x}', wanted '{wanted:02x}'. Bad bits {}\nfio: bad pattern block offset {offset}\npattern: verify failed {place}",
                (got ^ wanted).count_ones()
            ),
        }
    }
}

impl Layout {
    /// The layout a job's verify options ask for; `None` if it does not verify.
    pub(crate) fn of(spec: &VerifySpec) -> Option<Self> {
        Some(Self {
            kind: spec.kind.clone()?,
            interval: spec.interval,
            pattern: spec.pattern.clone(),
        })
    }

    /// Bytes a block needs at least: a header and its checksum.
    pub(crate) fn min_block(&self) -> u64 {
        header::type_number(&self.kind).map_or(1, |_| header::prefix_len(&self.kind) as u64)
    }

    /// The verify interval of a block of `length` bytes: `verify_interval` if it divides the
    /// block, else the whole block.
    fn interval(&self, length: u64) -> u64 {
        if self.interval > 0 && self.interval <= length && length.is_multiple_of(self.interval) {
            self.interval
        } else {
            length
        }
    }

    /// Fill `buffer` (the whole block) for writing `written`.
    pub(crate) fn fill(&self, buffer: &mut [u8], written: &Written, stamp: Stamp) {
        self.fill_data(buffer, written.seed, written.offset);
        let Some(verify_type) = header::type_number(&self.kind) else {
            return;
        };
        let interval = self.interval(written.length) as usize;
        for (index, chunk) in buffer.chunks_mut(interval.max(1)).enumerate() {
            if chunk.len() < header::prefix_len(&self.kind) {
                continue;
            }
            let header = Header {
                magic: MAGIC,
                verify_type,
                len: u32::try_from(chunk.len()).unwrap_or(u32::MAX),
                rand_seed: written.seed,
                offset: written.offset + (index * interval) as u64,
                time_sec: u32::try_from(stamp.elapsed / 1_000_000_000).unwrap_or(u32::MAX),
                time_nsec: (stamp.elapsed % 1_000_000_000) as u32,
                thread: stamp.thread,
                numberio: written.numberio,
                crc: 0,
            };
            header.write(chunk);
            let data_at = header::prefix_len(&self.kind);
            let sum = header::checksum(&self.kind, &chunk[data_at..]);
            chunk[HEADER_LEN..data_at].copy_from_slice(&sum);
        }
    }

    /// The data the block at `offset` of `seed` holds before its headers: `verify_pattern`
    /// repeated from the block's start, else bytes from the seed.
    fn fill_data(&self, buffer: &mut [u8], seed: u64, offset: u64) {
        if self.pattern.is_empty() {
            let mut state = seed;
            for chunk in buffer.chunks_mut(8) {
                let word = splitmix64(&mut state).to_le_bytes();
                chunk.copy_from_slice(&word[..chunk.len()]);
            }
        } else {
            let pattern = self.pattern.for_block(offset);
            for (byte, want) in buffer.iter_mut().zip(pattern.iter().cycle()) {
                *byte = *want;
            }
        }
    }

    /// What the block should hold, for `verify_dump`: rebuilt from the seed `expect` gives,
    /// else the one in the block's first header.
    pub(crate) fn expected(&self, read: &[u8], expect: &Expect, stamp: Stamp) -> Vec<u8> {
        let (seed, numberio) = expect.written.unwrap_or_else(|| {
            let header = (read.len() >= HEADER_LEN).then(|| Header::read(read));
            header.map_or((0, 0), |h| (h.rand_seed, h.numberio))
        });
        let mut block = vec![0u8; read.len()];
        let written = Written {
            file: 0,
            offset: expect.offset,
            length: expect.length,
            seed,
            numberio,
        };
        self.fill(&mut block, &written, stamp);
        block
    }

    /// Check a block read back; the first failure found.
    pub(crate) fn check(&self, read: &[u8], expect: &Expect) -> Result<(), Failure> {
        let Some(verify_type) = header::type_number(&self.kind) else {
            return self.check_pattern(read, expect);
        };
        let interval = self.interval(expect.length) as usize;
        for (index, chunk) in read.chunks(interval.max(1)).enumerate() {
            if chunk.len() < header::prefix_len(&self.kind) {
                continue;
            }
            let at = expect.offset + (index * interval) as u64;
            let fail = |problem| Failure {
                at,
                len: chunk.len() as u64,
                problem,
            };
            check_header(chunk, at, verify_type, expect).map_err(fail)?;
            self.check_sum(chunk).map_err(fail)?;
        }
        Ok(())
    }

    fn check_sum(&self, chunk: &[u8]) -> Result<(), Problem> {
        let data_at = header::prefix_len(&self.kind);
        let stored = &chunk[HEADER_LEN..data_at];
        let computed = header::checksum(&self.kind, &chunk[data_at..]);
        if stored == computed.as_slice() {
            return Ok(());
        }
        Err(Problem::Checksum {
            expected: header::checksum_text(stored),
            received: header::checksum_text(&computed),
        })
    }

    fn check_pattern(&self, read: &[u8], expect: &Expect) -> Result<(), Failure> {
        let pattern = self.pattern.for_block(expect.offset);
        let differs = read
            .iter()
            .zip(pattern.iter().cycle())
            .position(|(got, wanted)| got != wanted);
        match differs {
            None => Ok(()),
            Some(index) => Err(Failure {
                at: expect.offset,
                len: expect.length,
                problem: Problem::Pattern {
                    offset: index as u64,
                    got: read[index],
                    wanted: pattern[index % pattern.len()],
                },
            }),
        }
    }
}

/// The header checks, in fio's order: magic, type, length, seed, offset, numberio, crc.
fn check_header(chunk: &[u8], at: u64, verify_type: u16, expect: &Expect) -> Result<(), Problem> {
    let header = Header::read(chunk);
    let bad = |field, found: String, wanted: String| {
        Err(Problem::Header {
            field,
            found,
            wanted,
        })
    };
    if header.magic != MAGIC {
        return bad("magic", format!("{:x}", header.magic), format!("{MAGIC:x}"));
    }
    if header.verify_type != verify_type {
        return Err(Problem::TypeMismatch {
            media: header.verify_type,
            given: verify_type,
        });
    }
    if u64::from(header.len) != chunk.len() as u64 {
        let (found, wanted) = (header.len.to_string(), chunk.len().to_string());
        return bad("length", found, wanted);
    }
    if let Some((seed, _)) = expect.written {
        if header.rand_seed != seed {
            return bad("rand_seed", header.rand_seed.to_string(), seed.to_string());
        }
    }
    if header.offset != at {
        return bad("offset", header.offset.to_string(), at.to_string());
    }
    if let Some((_, numberio)) = expect.written {
        if header.numberio != numberio {
            return bad(
                "numberio",
                header.numberio.to_string(),
                numberio.to_string(),
            );
        }
    }
    let computed = Header::computed_crc(chunk);
    if header.crc != computed {
        return bad("crc", format!("{:x}", header.crc), format!("{computed:x}"));
    }
    Ok(())
}

/// The next word of a SplitMix64 stream (a block's data from its seed).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: VerifyKind, interval: u64) -> Layout {
        Layout {
            kind,
            interval,
            pattern: VerifyPattern::default(),
        }
    }

    fn written(offset: u64, length: u64) -> Written {
        Written {
            file: 0,
            offset,
            length,
            seed: 42,
            numberio: 3,
        }
    }

    const STAMP: Stamp = Stamp {
        thread: 1,
        elapsed: 1_500_000_000,
    };

    fn expect(offset: u64, length: u64) -> Expect {
        Expect {
            offset,
            length,
            written: Some((42, 3)),
        }
    }

    #[test]
    fn every_kind_checks_what_it_filled_and_finds_a_flipped_byte() {
        let kinds = [
            VerifyKind::Crc32c,
            VerifyKind::Md5,
            VerifyKind::Sha256,
            VerifyKind::Xxhash,
        ];
        for kind in kinds {
            let layout = layout(kind.clone(), 1024);
            let mut block = vec![0u8; 4096];
            layout.fill(&mut block, &written(8192, 4096), STAMP);
            assert_eq!(
                layout.check(&block, &expect(8192, 4096)),
                Ok(()),
                "{kind:?}"
            );
            block[2048 + 200] ^= 0xff;
            let failure = layout
                .check(&block, &expect(8192, 4096))
                .expect_err("corrupt");
            assert_eq!((failure.at, failure.len), (8192 + 2048, 1024), "{kind:?}");
            assert!(
                matches!(failure.problem, Problem::Checksum { .. }),
                "{kind:?}"
            );
        }
    }

    #[test]
    fn a_header_in_the_wrong_place_is_a_bad_offset() {
        let layout = layout(VerifyKind::Crc32c, 0);
        let mut block = vec![0u8; 4096];
        layout.fill(&mut block, &written(0, 4096), STAMP);
        let failure = layout
            .check(&block, &expect(4096, 4096))
            .expect_err("moved");
        let text = failure.message(&layout.kind, "f", &expect(4096, 4096));
        assert_eq!(
            text,
            "verify: bad header offset 0, wanted 4096 at file f offset 4096, length 4096 (requested block: offset=4096, length=4096)"
        );
    }

    #[test]
    fn a_pattern_block_reports_the_first_byte_that_differs() {
        let layout = Layout {
            kind: VerifyKind::Pattern,
            interval: 0,
            pattern: VerifyPattern {
                bytes: vec![0xde, 0xad],
                offset_at: Vec::new(),
            },
        };
        let mut block = vec![0u8; 512];
        layout.fill(&mut block, &written(0, 512), STAMP);
        assert_eq!(&block[..4], &[0xde, 0xad, 0xde, 0xad]);
        block[101] = 0xff;
        let failure = layout.check(&block, &expect(0, 512)).expect_err("corrupt");
        assert_eq!(
            failure.problem,
            Problem::Pattern {
                offset: 101,
                got: 0xff,
                wanted: 0xad
            }
        );
    }
}
