//! How the timeline writes things: durations and instants in labels, and text escaped for
//! HTML and XML.

use ioslice_core::Nanos;
use std::fmt::Write as _;

/// A duration with three significant digits in the largest unit that fits: `850 ns`,
/// `12.3 µs`, `4.10 ms`, `1.23 s`.
pub fn duration(nanos: Nanos) -> String {
    let (value, unit) = if nanos < 1_000 {
        return format!("{nanos} ns");
    } else if nanos < 1_000_000 {
        (nanos as f64 / 1e3, "µs")
    } else if nanos < 1_000_000_000 {
        (nanos as f64 / 1e6, "ms")
    } else {
        (nanos as f64 / 1e9, "s")
    };
    let decimals = if value >= 100.0 {
        0
    } else if value >= 10.0 {
        1
    } else {
        2
    };
    format!("{value:.decimals$} {unit}")
}

/// An instant into the run, in seconds with six decimals: `1.234567 s`.
pub fn instant(nanos: Nanos) -> String {
    format!(
        "{}.{:06} s",
        nanos / 1_000_000_000,
        (nanos % 1_000_000_000) / 1_000
    )
}

/// Append `text` escaped for HTML text and attribute values (and XML).
pub fn escape_into(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => {
                let _ = write!(out, "&#xFFFD;");
            }
            c => out.push(c),
        }
    }
}

/// `text` escaped for HTML and XML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    escape_into(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_keep_three_digits() {
        assert_eq!(duration(0), "0 ns");
        assert_eq!(duration(999), "999 ns");
        assert_eq!(duration(12_345), "12.3 µs");
        assert_eq!(duration(4_100_000), "4.10 ms");
        assert_eq!(duration(100_000_000), "100 ms");
        assert_eq!(duration(1_234_000_000), "1.23 s");
        assert_eq!(instant(1_234_567_890), "1.234567 s");
    }

    #[test]
    fn escaping_covers_markup_and_controls() {
        assert_eq!(escape("a<b&c\"d'e>"), "a&lt;b&amp;c&quot;d&#39;e&gt;");
        assert_eq!(escape("x\u{1}y"), "x&#xFFFD;y");
    }
}
