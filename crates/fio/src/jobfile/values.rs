//! fio's value syntax: sizes with `kb_base` suffixes (and inline arithmetic), percentages,
//! times with units, booleans, `a-b` ranges and comma-separated read,write,trim lists.
//!
//! Each parser returns `None` when the text does not parse; the caller names the option and
//! what it expected.

use ioslice_core::spec::parse_duration;
use ioslice_core::spec::quantity::split_number;

use crate::job::Extent;

/// Parses a size such as `4096`, `4k`, `1.5MiB`, `0x1000` or `(64*$pagesize)` into bytes.
///
/// With `kb_base=1024` (fio's default "compatibility mode") `k`, `kb` and `K` mean 1024 and
/// the IEC forms (`KiB`) mean 1000; with `kb_base=1000` it is the other way round, as the
/// SI and IEC standards say. Suffixes are case-insensitive. A value with `+`, `*`, `/`, `^`
/// or parentheses is evaluated as an arithmetic expression whose numbers may carry suffixes.
pub fn size(text: &str, kb_base: u32) -> Option<u64> {
    let text = text.trim();
    if is_expression(text) {
        return arithmetic::evaluate(text, kb_base);
    }
    let (number, suffix) = split_number(text)?;
    let multiplier = size_multiplier(suffix, kb_base)?;
    number.scale(multiplier)
}

/// Parses a size or a percentage (`50%`) of the target.
pub fn extent(text: &str, kb_base: u32) -> Option<Extent> {
    match text.trim().strip_suffix('%') {
        Some(pct) => {
            let pct: u32 = pct.trim().parse().ok()?;
            (pct <= 100).then_some(if pct == 0 {
                Extent::Bytes(0)
            } else {
                Extent::Percent(pct)
            })
        }
        None => size(text, kb_base).map(Extent::Bytes),
    }
}

/// Parses a time into nanoseconds; a bare number is in `default_unit` nanoseconds
/// (1_000_000_000 for seconds, 1_000 for µs). Units: `ns`, `us`/`usec`, `ms`/`msec`,
/// `s`/`sec`, `m`/`min`, `h`, `d`, read by `ioslice_core::spec` as every duration is.
pub fn time(text: &str, default_unit: u64) -> Option<u64> {
    parse_duration(text, Some(default_unit))
}

/// Parses fio's booleans: `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`.
pub fn boolean(text: &str) -> Option<bool> {
    match text.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

/// Parses a plain non-negative integer (fio's `int` options also take size suffixes).
pub fn integer(text: &str, kb_base: u32) -> Option<u64> {
    size(text, kb_base)
}

/// Parses `a-b` or `a:b` with `item`, or a single value as `(v, v)`. The low end must not
/// exceed the high end.
pub fn range<T: Copy + PartialOrd>(text: &str, item: impl Fn(&str) -> Option<T>) -> Option<(T, T)> {
    let text = text.trim();
    let split = text
        .char_indices()
        .skip(1)
        .find(|(_, c)| *c == '-' || *c == ':')
        .map(|(at, _)| at);
    let (low, high) = match split {
        Some(at) => (item(&text[..at])?, item(&text[at + 1..])?),
        None => {
            let v = item(text)?;
            (v, v)
        }
    };
    (low <= high).then_some((low, high))
}

/// Parses a comma-separated read,write,trim list. An empty item keeps the default (`None`);
/// a list not ending in a comma carries its last item to the remaining directions
/// (`bs=8k,32k` gives trims 32k; `bs=8k,32k,` leaves them at the default).
pub fn per_direction<T: Clone>(
    text: &str,
    item: impl Fn(&str) -> Option<T>,
) -> Option<[Option<T>; 3]> {
    let pieces: Vec<&str> = text.split(',').map(str::trim).collect();
    if pieces.len() > 3 {
        return None;
    }
    let last = pieces.len() - 1;
    let mut out: [Option<T>; 3] = [None, None, None];
    for (slot, value) in out.iter_mut().enumerate() {
        let piece = pieces[slot.min(last)];
        if !piece.is_empty() {
            *value = Some(item(piece)?);
        }
    }
    Some(out)
}

/// Whether a value should be evaluated as arithmetic.
fn is_expression(text: &str) -> bool {
    text.contains(['+', '*', '/', '^', '(', ')'])
}

/// fio's own multipliers, which `kb_base` swaps between the SI and IEC suffixes; the
/// number before them is read by `ioslice_core::spec`, as every size is.
fn size_multiplier(suffix: &str, kb_base: u32) -> Option<u128> {
    let lower = suffix.to_ascii_lowercase();
    let (power, iec) = match lower.as_str() {
        "" | "b" => return Some(1),
        "k" | "kb" => (1, false),
        "m" | "mb" => (2, false),
        "g" | "gb" => (3, false),
        "t" | "tb" => (4, false),
        "p" | "pb" => (5, false),
        "kib" => (1, true),
        "mib" => (2, true),
        "gib" => (3, true),
        "tib" => (4, true),
        "pib" => (5, true),
        _ => return None,
    };
    let base: u128 = match (kb_base, iec) {
        (1000, false) | (1024, true) => 1000,
        _ => 1024,
    };
    Some(base.pow(power))
}

/// Inline arithmetic: `+ - * / ^` and parentheses over sizes, in u128 with overflow checks.
mod arithmetic {
    use super::{size_multiplier, split_number};

    /// Evaluates `text`; `None` on a syntax error, overflow, division by zero or a negative
    /// result.
    pub fn evaluate(text: &str, kb_base: u32) -> Option<u64> {
        // Bounds the recursion of `^` chains and unary minus; real values are short.
        if text.len() > MAX_LEN {
            return None;
        }
        let mut parser = Parser {
            rest: text,
            kb_base,
            depth: 0,
        };
        let value = parser.sum()?;
        parser.skip_space();
        if !parser.rest.is_empty() || value < 0 {
            return None;
        }
        u64::try_from(value).ok()
    }

    const MAX_LEN: usize = 256;

    struct Parser<'a> {
        rest: &'a str,
        kb_base: u32,
        depth: u32,
    }

    impl Parser<'_> {
        fn skip_space(&mut self) {
            self.rest = self.rest.trim_start();
        }

        fn eat(&mut self, c: char) -> bool {
            self.skip_space();
            match self.rest.strip_prefix(c) {
                Some(rest) => {
                    self.rest = rest;
                    true
                }
                None => false,
            }
        }

        fn sum(&mut self) -> Option<i128> {
            let mut value = self.product()?;
            loop {
                if self.eat('+') {
                    value = value.checked_add(self.product()?)?;
                } else if self.eat('-') {
                    value = value.checked_sub(self.product()?)?;
                } else {
                    return Some(value);
                }
            }
        }

        fn product(&mut self) -> Option<i128> {
            let mut value = self.power()?;
            loop {
                if self.eat('*') {
                    value = value.checked_mul(self.power()?)?;
                } else if self.eat('/') {
                    value = value.checked_div(self.power()?)?;
                } else {
                    return Some(value);
                }
            }
        }

        fn power(&mut self) -> Option<i128> {
            let base = self.atom()?;
            if self.eat('^') {
                let exponent = u32::try_from(self.power()?).ok()?;
                return base.checked_pow(exponent);
            }
            Some(base)
        }

        fn atom(&mut self) -> Option<i128> {
            if self.eat('(') {
                self.depth += 1;
                if self.depth > 64 {
                    return None;
                }
                let value = self.sum()?;
                self.depth -= 1;
                return self.eat(')').then_some(value);
            }
            if self.eat('-') {
                return self.atom()?.checked_neg();
            }
            self.number()
        }

        fn number(&mut self) -> Option<i128> {
            self.skip_space();
            let end = self
                .rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
                .unwrap_or(self.rest.len());
            let (token, rest) = self.rest.split_at(end);
            self.rest = rest;
            let (number, suffix) = split_number(token)?;
            let value = number.scale(size_multiplier(suffix, self.kb_base)?)?;
            Some(i128::from(value))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_kb_base() {
        assert_eq!(size("4k", 1024), Some(4096));
        assert_eq!(size("4KB", 1024), Some(4096));
        assert_eq!(size("4KiB", 1024), Some(4000));
        assert_eq!(size("4k", 1000), Some(4000));
        assert_eq!(size("4kB", 1000), Some(4000));
        assert_eq!(size("4KiB", 1000), Some(4096));
        assert_eq!(size("1.5m", 1024), Some(1_572_864));
        assert_eq!(size("0x10", 1024), Some(16));
        assert_eq!(size("fast", 1024), None);
        assert_eq!(size("", 1024), None);
        assert_eq!(size("99999999999999999999999p", 1024), None);
    }

    #[test]
    fn arithmetic_with_suffixes() {
        assert_eq!(size("64*4096", 1024), Some(262_144));
        assert_eq!(size("(4k+4k)/2", 1024), Some(4096));
        assert_eq!(size("2^10", 1024), Some(1024));
        assert_eq!(size("1/0", 1024), None);
        assert_eq!(size("(1", 1024), None);
        assert_eq!(size("1-2*3+(0)", 1024), None);
        assert_eq!(size(&"2^".repeat(5000), 1024), None);
    }

    #[test]
    fn times_and_ranges() {
        assert_eq!(time("5m", 1_000_000_000), Some(300_000_000_000));
        assert_eq!(time("10", 1_000), Some(10_000));
        assert_eq!(time("250ms", 1_000), Some(250_000_000));
        assert_eq!(range("0-4", |t| time(t, 1)), Some((0, 4)));
        assert_eq!(range("16k:1m", |t| size(t, 1024)), Some((16384, 1 << 20)));
        assert_eq!(range("8-4", |t| size(t, 1024)), None);
    }

    #[test]
    fn direction_lists() {
        let p = |t: &str| per_direction(t, |x| size(x, 1024));
        assert_eq!(p("4k"), Some([Some(4096), Some(4096), Some(4096)]));
        assert_eq!(p("8k,32k"), Some([Some(8192), Some(32768), Some(32768)]));
        assert_eq!(p("8k,32k,"), Some([Some(8192), Some(32768), None]));
        assert_eq!(p(",8k"), Some([None, Some(8192), Some(8192)]));
        assert_eq!(p("1,2,3,4"), None);
    }
}
