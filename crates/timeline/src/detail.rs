//! A timeline's [`Detail`] as the page embeds it: compact JSON (each kind's class, its
//! band's offset and height in the lane and the band's drawing order, once; then one array a mark: lane, start and width in microseconds, kind, opacity, label),
//! compressed with raw deflate and written in base64 inside a `<script>` element that is not
//! run. The page's script inflates it with the browser's `DecompressionStream` the first
//! time the view is zoomed in, and draws the marks in view from it.
//!
//! A record's JSON ([`Stored`]) keeps the marks the same way, losslessly: base64 of raw
//! deflate of the marks' own JSON.

use miniz_oxide::deflate::compress_to_vec;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::kind::{Band, MarkKind};
use crate::{Detail, Mark, Sampling, DETAIL_MAX_CAP};

/// The most bytes a stored detail's marks may inflate to: a kilobyte a mark.
const INFLATED_LIMIT: usize = DETAIL_MAX_CAP * 1024;

/// A [`Detail`] as a record's JSON keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stored {
    /// How the marks were down-sampled.
    sampling: Sampling,
    /// Base64 of raw deflate of the marks' JSON.
    deflated_marks: String,
}

impl From<Detail> for Stored {
    fn from(detail: Detail) -> Self {
        let json = serde_json::to_vec(&detail.marks).unwrap_or_default();
        Stored {
            sampling: detail.sampling,
            deflated_marks: base64(&compress_to_vec(&json, LEVEL)),
        }
    }
}

impl TryFrom<Stored> for Detail {
    type Error = String;

    fn try_from(stored: Stored) -> Result<Self, String> {
        let deflated = unbase64(&stored.deflated_marks)
            .ok_or("timeline detail: deflated_marks is not base64")?;
        let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, INFLATED_LIMIT)
            .map_err(|e| {
                format!(
                    "timeline detail: deflated_marks does not inflate to at most {INFLATED_LIMIT} bytes ({e})"
                )
            })?;
        let marks: Vec<Mark> = serde_json::from_slice(&json)
            .map_err(|e| format!("timeline detail: expected marks, found {e}"))?;
        Ok(Detail {
            marks,
            sampling: stored.sampling,
        })
    }
}

/// How hard to compress: miniz's default level.
const LEVEL: u8 = 6;

/// The detail as base64 of raw deflate of its JSON, for lanes `lane` high.
pub(crate) fn encode(detail: &Detail, lane: u32) -> String {
    let kinds: Vec<Value> = MarkKind::ALL
        .iter()
        .map(|kind| {
            let (offset, height) = kind.band().geometry(lane);
            json!([kind.name(), offset, height, kind.band() as u8])
        })
        .collect();
    let marks: Vec<Value> = detail
        .marks
        .iter()
        .map(|mark| {
            let kind = MarkKind::ALL
                .iter()
                .position(|k| k.name() == mark.kind)
                .unwrap_or_else(|| {
                    MarkKind::ALL
                        .iter()
                        .position(|k| k.band() == Band::Instant)
                        .unwrap_or(0)
                });
            let width = mark.end.saturating_sub(mark.start).max(1);
            let opacity = if mark.coverage < 1000 {
                50 + mark.coverage / 20
            } else {
                100
            };
            json!([
                mark.lane,
                mark.start as f64 / 1e3,
                width as f64 / 1e3,
                kind,
                opacity,
                format!("{} (at {})", mark.label, crate::text::instant(mark.start))
            ])
        })
        .collect();
    let text = json!({ "kinds": kinds, "marks": marks }).to_string();
    base64(&compress_to_vec(text.as_bytes(), LEVEL))
}

/// Standard base64 with padding.
pub(crate) fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Standard base64 (padding optional) back to bytes; `None` for any other character.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut count) = (0u32, 0u32);
    for c in text.bytes().filter(|&c| c != b'=') {
        let value = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Mark, Sampling};

    #[test]
    fn a_stored_detail_comes_back_the_same() {
        let detail = Detail {
            marks: vec![Mark {
                lane: 1,
                start: 7,
                end: 9_000,
                kind: "service".into(),
                label: "3 requests".into(),
                count: 3,
                coverage: 450,
            }],
            sampling: Sampling {
                cap: 10,
                ..Sampling::default()
            },
        };
        let json = serde_json::to_string(&detail).expect("JSON");
        assert!(json.contains("\"deflated_marks\":\""));
        let back: Detail = serde_json::from_str(&json).expect("read back");
        assert_eq!(back, detail);
        let broken = json.replace("deflated_marks\":\"", "deflated_marks\":\"!");
        let error = serde_json::from_str::<Detail>(&broken).expect_err("not base64");
        assert!(error.to_string().contains("deflated_marks is not base64"));
        assert_eq!(unbase64("Zm9vYmFy"), Some(b"foobar".to_vec()));
        assert_eq!(unbase64("Zg=="), Some(b"f".to_vec()));
    }

    #[test]
    fn base64_is_the_standard_one() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn a_detail_inflates_to_its_marks() {
        let detail = Detail {
            marks: vec![Mark {
                lane: 2,
                start: 1_500_000,
                end: 2_000_000,
                kind: "group".into(),
                label: "group /a <in service>".into(),
                count: 1,
                coverage: 600,
            }],
            sampling: Sampling::default(),
        };
        let encoded = encode(&detail, 28);
        let mut bytes = Vec::new();
        let alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut bits = 0u32;
        let mut count = 0;
        for c in encoded.chars().filter(|&c| c != '=') {
            bits = (bits << 6) | alphabet.find(c).expect("base64") as u32;
            count += 6;
            if count >= 8 {
                count -= 8;
                bytes.push((bits >> count) as u8);
                bits &= (1 << count) - 1;
            }
        }
        let json = miniz_oxide::inflate::decompress_to_vec(&bytes).expect("raw deflate");
        let value: Value = serde_json::from_slice(&json).expect("JSON");
        let mark = &value["marks"][0];
        assert_eq!(mark[0], 2);
        assert_eq!(mark[1], 1500.0);
        assert_eq!(mark[2], 500.0);
        assert_eq!(
            value["kinds"][mark[3].as_u64().expect("kind") as usize][0],
            "group"
        );
        assert_eq!(mark[4], 80);
        assert_eq!(mark[5], "group /a <in service> (at 0.001500 s)");
    }
}
