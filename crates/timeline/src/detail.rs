//! A timeline's [`Detail`] as the page embeds it: compact JSON (each kind's class, its
//! band's offset and height in the lane and the band's drawing order, once; then one array a mark: lane, start and width in microseconds, kind, opacity, label),
//! compressed with raw deflate and written in base64 inside a `<script>` element that is not
//! run. The page's script inflates it with the browser's `DecompressionStream` the first
//! time the view is zoomed in, and draws the marks in view from it.

use miniz_oxide::deflate::compress_to_vec;
use serde_json::{json, Value};

use crate::kind::{Band, MarkKind};
use crate::Detail;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Mark, Sampling};

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
