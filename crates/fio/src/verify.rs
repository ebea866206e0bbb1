//! fio's verify options as a job asks for them: `verify=` (the checksum kind), `do_verify`,
//! `verify_only`, `verify_backlog`, `verify_backlog_batch`, `verify_fatal`, `verify_dump`,
//! `verify_interval` and `verify_pattern`.
//!
//! This module only describes what a job asks for; running it (block headers, checksums,
//! the read-back phase) is the runner's (`ioslice-runner`'s `verify` module). The simulator
//! does not model the read-back phase.

/// The checksum (or pattern) a job writes into each block and checks on reading it back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyKind {
    /// `verify=md5`.
    Md5,
    /// `verify=crc32c` (and `crc32c-intel`, its synonym in fio).
    Crc32c,
    /// `verify=sha256`.
    Sha256,
    /// `verify=xxhash` (32-bit xxHash).
    Xxhash,
    /// `verify=pattern`: no header, the blocks hold `verify_pattern` repeated.
    Pattern,
    /// A kind fio knows that ioslice does not write (crc64, crc32, sha512, …): refused
    /// before a run.
    Unsupported(String),
}

impl VerifyKind {
    /// `verify=`'s value; `None` for `verify=0` and `verify=none` (no verification) and for
    /// names fio does not know. A job file's value is first checked against fio's own list
    /// ([`crate::jobfile::value_check`]), which has no `none` and is case-sensitive.
    pub fn parse(text: &str) -> Option<Option<Self>> {
        let kind = match text.trim().to_ascii_lowercase().as_str() {
            "0" | "none" => return Some(None),
            "md5" => Self::Md5,
            "crc32c" | "crc32c-intel" => Self::Crc32c,
            "sha256" => Self::Sha256,
            "xxhash" => Self::Xxhash,
            "pattern" => Self::Pattern,
            other @ ("crc64" | "crc32" | "crc16" | "crc7" | "sha512" | "sha1" | "sha3-224"
            | "sha3-256" | "sha3-384" | "sha3-512" | "meta" | "null" | "pattern_hdr") => {
                Self::Unsupported(other.to_string())
            }
            _ => return None,
        };
        Some(Some(kind))
    }

    /// fio's name for it.
    pub fn fio_name(&self) -> &str {
        match self {
            Self::Md5 => "md5",
            Self::Crc32c => "crc32c",
            Self::Sha256 => "sha256",
            Self::Xxhash => "xxhash",
            Self::Pattern => "pattern",
            Self::Unsupported(name) => name,
        }
    }
}

/// What `verify=` and its companions ask of a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifySpec {
    /// `verify=`: `None` when the job does not verify.
    pub kind: Option<VerifyKind>,
    /// `do_verify=` (default true): read back and check after the write phase.
    pub do_verify: bool,
    /// `verify_only`: do not write; read back what the same job wrote earlier and check it.
    pub verify_only: bool,
    /// `verify_backlog=N`: check the written blocks after every N of them (0: at the end).
    pub backlog: u64,
    /// `verify_backlog_batch=N`: how many of the backlog to check each time (0: all of it).
    pub backlog_batch: u64,
    /// `verify_fatal`: stop the job at the first verify failure, whatever
    /// `continue_on_error=` says.
    pub fatal: bool,
    /// `verify_dump`: write the expected and the received block of a failure to files.
    pub dump: bool,
    /// `verify_interval=`: bytes per header (0: the block size).
    pub interval: u64,
    /// `verify_pattern=`: what data is filled with, repeated (empty: random data).
    pub pattern: VerifyPattern,
}

impl Default for VerifySpec {
    fn default() -> Self {
        Self {
            kind: None,
            do_verify: true,
            verify_only: false,
            backlog: 0,
            backlog_batch: 0,
            fatal: false,
            dump: false,
            interval: 0,
            pattern: VerifyPattern::default(),
        }
    }
}

impl VerifySpec {
    /// Whether the job verifies at all: `verify=` names a kind and `do_verify` is on.
    pub fn active(&self) -> bool {
        self.kind.is_some() && self.do_verify
    }
}

/// `verify_pattern=`: bytes repeated over a block, with the block's offset (8 bytes, least
/// significant first) at each place `%o` stood.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VerifyPattern {
    /// The pattern, with zeros where the offset goes.
    pub bytes: Vec<u8>,
    /// Where in `bytes` the block's offset goes.
    pub offset_at: Vec<usize>,
}

impl VerifyPattern {
    /// Whether no pattern was given.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The pattern of the block at `offset`.
    pub fn for_block(&self, offset: u64) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        for &at in &self.offset_at {
            bytes[at..at + 8].copy_from_slice(&offset.to_le_bytes());
        }
        bytes
    }
}

/// `verify_pattern=`'s value: items one after the other, each a hex number (`0xdeadbeef`, its
/// bytes in the order written), a decimal number (its bytes least significant first, as few
/// as hold it), a quoted string (`"abcd"`) or `%o` (the block's offset, 8 bytes least
/// significant first). `None` when the text is none of these.
pub fn parse_pattern(text: &str) -> Option<VerifyPattern> {
    let mut bytes = Vec::new();
    let mut offset_at = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        rest = if let Some(after) = rest.strip_prefix("%o") {
            offset_at.push(bytes.len());
            bytes.extend_from_slice(&[0; 8]);
            after
        } else if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"')?;
            bytes.extend_from_slice(&quoted.as_bytes()[..end]);
            &quoted[end + 1..]
        } else if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let end = hex
                .find(|c: char| !c.is_ascii_hexdigit())
                .unwrap_or(hex.len());
            bytes.extend(hex_bytes(&hex[..end])?);
            &hex[end..]
        } else {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            bytes.extend(decimal_bytes(&rest[..end])?);
            &rest[end..]
        };
        rest = rest.trim_start();
    }
    (!bytes.is_empty()).then_some(VerifyPattern { bytes, offset_at })
}

/// Hex digits as bytes in the order written (an odd count gets a leading zero nibble).
fn hex_bytes(digits: &str) -> Option<Vec<u8>> {
    if digits.is_empty() {
        return None;
    }
    let padded = if !digits.len().is_multiple_of(2) {
        format!("0{digits}")
    } else {
        digits.to_string()
    };
    (0..padded.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(&padded[at..at + 2], 16).ok())
        .collect()
}

/// A decimal number as its bytes, least significant first, as few as hold it (at least one).
fn decimal_bytes(digits: &str) -> Option<Vec<u8>> {
    let value: u32 = digits.parse().ok()?;
    let width = (4 - value.leading_zeros() as usize / 8).max(1);
    Some(value.to_le_bytes()[..width].to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_pattern(text: &str) -> Option<Vec<u8>> {
        super::parse_pattern(text).map(|p| p.for_block(0x1000))
    }

    #[test]
    fn patterns_read_as_fio_lays_them_out() {
        assert_eq!(
            parse_pattern("0xdeadbeef"),
            Some(vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert_eq!(parse_pattern("258"), Some(vec![0x02, 0x01]));
        assert_eq!(parse_pattern("7"), Some(vec![7]));
        assert_eq!(parse_pattern("\"ab\""), Some(b"ab".to_vec()));
        assert_eq!(parse_pattern("0x01\"ab\""), Some(vec![1, b'a', b'b']));
        assert_eq!(parse_pattern("%o"), Some(vec![0, 0x10, 0, 0, 0, 0, 0, 0]));
        assert_eq!(
            parse_pattern("0xff%o\"ab\""),
            Some(vec![0xff, 0, 0x10, 0, 0, 0, 0, 0, 0, b'a', b'b'])
        );
        assert_eq!(parse_pattern(""), None);
        assert_eq!(parse_pattern("0x"), None);
        assert_eq!(parse_pattern("\"open"), None);
    }

    #[test]
    fn kinds_and_synonyms() {
        assert_eq!(
            VerifyKind::parse("crc32c-intel"),
            Some(Some(VerifyKind::Crc32c))
        );
        assert_eq!(VerifyKind::parse("0"), Some(None));
        assert_eq!(
            VerifyKind::parse("crc64"),
            Some(Some(VerifyKind::Unsupported("crc64".into())))
        );
        assert_eq!(VerifyKind::parse("blake"), None);
    }
}
