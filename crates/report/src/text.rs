//! Text on the page: HTML escaping, and the units figures are printed in (bytes in binary
//! units, latencies in the unit that suits them, bandwidth in KB/s of 1000 bytes as the
//! terminal's tables print it, [`kb_per_s`]).

/// Text made safe for HTML content and attribute values (the timeline's escaping, so the
/// page escapes one way throughout).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    ioslice_timeline::escape_into(&mut out, text);
    out
}

/// Bytes in the largest binary unit below them: `16.0 MiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// What the page says of its bandwidth unit.
pub const BANDWIDTH_UNIT: &str = "KB/s are 1000 bytes a second, as in the terminal's tables; \
     the charts over time give MB/s and MB of 10\u{2076} bytes";

/// Bytes/s as KB/s of 1000 bytes, rounded to the nearest: the terminal's tables' figure.
pub fn kb_per_s(bytes_per_second: u64) -> u64 {
    bytes_per_second.saturating_add(500) / 1000
}

/// A latency in ns as the axes print it: `850ns`, `12.5µs`, `3.2ms`, `1.5s`.
pub fn latency_label(ns: f64) -> String {
    let (value, unit) = if ns >= 1e9 {
        (ns / 1e9, "s")
    } else if ns >= 1e6 {
        (ns / 1e6, "ms")
    } else if ns >= 1e3 {
        (ns / 1e3, "µs")
    } else {
        (ns, "ns")
    };
    let text = format!("{value:.1}");
    let text = text.strip_suffix(".0").unwrap_or(&text);
    format!("{text}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_units() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(16 << 20), "16.0 MiB");
    }

    #[test]
    fn bandwidth_is_in_kb_of_1000_bytes_as_in_the_terminal() {
        assert_eq!(kb_per_s(6_133_999), 6134);
        assert_eq!(kb_per_s(499), 0);
        assert_eq!(kb_per_s(500), 1);
        assert_eq!(kb_per_s(u64::MAX), u64::MAX / 1000);
    }

    #[test]
    fn latency_labels_pick_a_unit() {
        assert_eq!(latency_label(850.0), "850ns");
        assert_eq!(latency_label(12_500.0), "12.5µs");
        assert_eq!(latency_label(3_000_000.0), "3ms");
        assert_eq!(latency_label(1.5e9), "1.5s");
    }
}
