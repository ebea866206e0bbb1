//! Variable expansion in values: `${NAME}` from the environment map given to the parser,
//! and fio's reserved keywords `$pagesize`, `$mb_memory` and `$ncpus` from
//! [`ParseOptions`], so parsing never depends on the machine.
//!
//! fio itself substitutes an empty string for an undefined `${NAME}`; ioslice refuses it
//! with an error naming the variable, because a silently empty `rw=` or `bs=` is worse.
//! Other `$words` (such as `$jobnum` in `filename_format`) are left for the option to use.

use super::{JobFileError, ParseOptions};
use crate::job::Origin;

/// fio's page size keyword value: fixed at 4096 for reproducibility.
pub const PAGE_SIZE: u64 = 4096;

/// Expands variables in `text` written at `origin`.
pub fn expand(text: &str, origin: &Origin, options: &ParseOptions) -> Result<String, JobFileError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (replacement, consumed) = substitute(after, origin, options)?;
        match replacement {
            Some(value) => out.push_str(&value),
            None => out.push('$'),
        }
        rest = &after[consumed..];
    }
    out.push_str(rest);
    Ok(out)
}

/// What follows a `$`: the replacement (None to keep the `$`) and how many bytes it used.
fn substitute(
    after: &str,
    origin: &Origin,
    options: &ParseOptions,
) -> Result<(Option<String>, usize), JobFileError> {
    if let Some(inner) = after.strip_prefix('{') {
        let Some(end) = inner.find('}') else {
            return Ok((None, 0));
        };
        let name = &inner[..end];
        let value =
            options
                .env
                .get(name)
                .cloned()
                .ok_or_else(|| JobFileError::UndefinedVariable {
                    origin: origin.clone(),
                    name: name.to_string(),
                })?;
        return Ok((Some(value), end + 2));
    }
    for (keyword, value) in keywords(options) {
        if after.starts_with(keyword) && !continues_word(&after[keyword.len()..]) {
            return Ok((Some(value.to_string()), keyword.len()));
        }
    }
    Ok((None, 0))
}

fn keywords(options: &ParseOptions) -> [(&'static str, u64); 3] {
    [
        ("pagesize", PAGE_SIZE),
        ("mb_memory", options.mb_memory),
        ("ncpus", u64::from(options.ncpus)),
    ]
}

fn continues_word(rest: &str) -> bool {
    rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_')
}
