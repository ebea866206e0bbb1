//! The command line's specification language, `NAME[:key=value,...]`, shared by every flag
//! that names a thing with settings: schedulers (`deadline:fifo_batch=1`), devices
//! (`sim:sata-7200:ncq=1`), controllers (`ioband:token=0`), cgroups (`grp1:weight=500`),
//! faults (`eio:every=100`) and the host (`--host memory_mib=512`, a list with no name).
//!
//! This module owns the grammar and nothing of its meaning: it splits a text into a name and
//! ordered, trimmed `key=value` settings and says in one line what is wrong with a text that
//! is not of that form (an empty name, an item with no `=`, an empty key or value, a key
//! given twice). Which keys a thing takes and what their values mean stay with the thing;
//! values that are sizes or durations are read by [`quantity`], the one reader of each.
//!
//! The name ends at the first `:`; a key ends at the first `=`, so a value may hold `=` or
//! `:` but no `,`. Names, keys and values are trimmed of surrounding whitespace.

pub mod quantity;

use std::fmt;
use std::str::FromStr;

pub use quantity::{parse_duration, parse_size, DURATION_UNITS};

/// A name with its `key=value` settings in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// What the text names (a scheduler, a device preset, a controller, …).
    pub name: String,
    /// `key=value` settings in the order given, each key once.
    pub settings: Vec<(String, String)>,
}

/// Why a text is not `NAME[:key=value,...]`; one line naming the bad part.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Nothing before the `:` (or no text at all).
    #[error("empty name")]
    EmptyName,
    /// An item with no `=` (an empty item between commas is one too).
    #[error("setting '{item}' has no value")]
    MissingEquals {
        /// The item, trimmed.
        item: String,
    },
    /// An item `=value`.
    #[error("setting '{item}' has no key")]
    EmptyKey {
        /// The item, trimmed.
        item: String,
    },
    /// An item `key=`.
    #[error("setting '{item}' has an empty value")]
    EmptyValue {
        /// The item, trimmed.
        item: String,
    },
    /// The same key twice in one text, where the second would silently undo the first.
    #[error("setting '{key}' is given twice")]
    DuplicateKey {
        /// The key.
        key: String,
    },
}

/// What an empty item between commas (`a=1,,b=2`, a trailing comma) is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmptyItems {
    /// An error, [`SpecError::MissingEquals`] with an empty item.
    Reject,
    /// Skipped, for the lists that have always taken them (`--host`, `--faults`).
    Skip,
}

impl Spec {
    /// Parse `NAME[:key=value,...]`, empty items treated as `empty` says.
    pub fn parse_with(text: &str, empty: EmptyItems) -> Result<Self, SpecError> {
        let (name, list) = match text.split_once(':') {
            Some((name, list)) => (name.trim(), Some(list)),
            None => (text.trim(), None),
        };
        if name.is_empty() {
            return Err(SpecError::EmptyName);
        }
        let settings = match list {
            Some(list) => parse_settings(list, empty)?,
            None => Vec::new(),
        };
        Ok(Self {
            name: name.to_string(),
            settings,
        })
    }

    /// The value of `key`, if set.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.settings
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

impl FromStr for Spec {
    type Err = SpecError;

    /// Parse `NAME[:key=value,...]`; an empty item is an error.
    fn from_str(text: &str) -> Result<Self, SpecError> {
        Self::parse_with(text, EmptyItems::Reject)
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_spec(f, &self.name, &self.settings)
    }
}

/// Write `name[:key=value,...]`, as [`Spec`] parses it back.
pub fn write_spec(
    f: &mut fmt::Formatter<'_>,
    name: &str,
    settings: &[(String, String)],
) -> fmt::Result {
    f.write_str(name)?;
    for (i, (key, value)) in settings.iter().enumerate() {
        write!(f, "{}{key}={value}", if i == 0 { ':' } else { ',' })?;
    }
    Ok(())
}

/// Parse a comma-separated `key=value,...` list.
pub fn parse_settings(list: &str, empty: EmptyItems) -> Result<Vec<(String, String)>, SpecError> {
    let items = list
        .split(',')
        .filter(|item| empty == EmptyItems::Reject || !item.trim().is_empty());
    parse_items(items)
}

/// Parse `key=value` items already split apart (as cgroup's `io.max` spelling splits them
/// at spaces), checking that no key comes twice.
pub fn parse_items<'a>(
    items: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<(String, String)>, SpecError> {
    let mut settings: Vec<(String, String)> = Vec::new();
    for item in items {
        let (key, value) = parse_setting(item)?;
        if settings.iter().any(|(k, _)| *k == key) {
            return Err(SpecError::DuplicateKey { key });
        }
        settings.push((key, value));
    }
    Ok(settings)
}

/// Parse one `key=value` item, trimmed.
pub fn parse_setting(item: &str) -> Result<(String, String), SpecError> {
    let item = item.trim();
    let (key, value) = item
        .split_once('=')
        .ok_or_else(|| SpecError::MissingEquals {
            item: item.to_string(),
        })?;
    let (key, value) = (key.trim(), value.trim());
    if key.is_empty() {
        return Err(SpecError::EmptyKey {
            item: item.to_string(),
        });
    }
    if value.is_empty() {
        return Err(SpecError::EmptyValue {
            item: item.to_string(),
        });
    }
    Ok((key.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests;
