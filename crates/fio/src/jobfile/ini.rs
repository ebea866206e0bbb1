//! The INI layer: lines into sections of `key[=value]` entries, with comments stripped,
//! `include` files spliced in and variables expanded. No option is interpreted here.

use std::path::{Path, PathBuf};

use super::expand::expand;
use super::{JobFileError, ParseOptions};
use crate::job::Origin;

/// How deep `include`s may nest before we call it a cycle.
pub const INCLUDE_DEPTH_LIMIT: usize = 16;

/// One `key` or `key=value` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The option name as written.
    pub key: String,
    /// The value after variable expansion; `None` for a bare key.
    pub value: Option<String>,
    /// Where it was written.
    pub origin: Origin,
}

/// A `[name]` section and its entries in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The name between the brackets.
    pub name: String,
    /// Where the header is.
    pub origin: Origin,
    /// Its options.
    pub entries: Vec<Entry>,
}

impl Section {
    /// Whether this is a `[global]` section.
    pub fn is_global(&self) -> bool {
        self.name == "global"
    }
}

/// Splits `text` (the contents of `file`) into sections, following includes.
pub fn read_sections(
    text: &str,
    file: &str,
    options: &ParseOptions,
) -> Result<Vec<Section>, JobFileError> {
    let mut reader = Reader {
        options,
        sections: Vec::new(),
    };
    reader.read(text, file, 0)?;
    Ok(reader.sections)
}

struct Reader<'a> {
    options: &'a ParseOptions,
    sections: Vec<Section>,
}

/// What one line is.
enum Line<'a> {
    Blank,
    Header(&'a str),
    Include(&'a str),
    Option(&'a str, Option<&'a str>),
}

impl Reader<'_> {
    fn read(&mut self, text: &str, file: &str, depth: usize) -> Result<(), JobFileError> {
        for (index, raw) in text.lines().enumerate() {
            let origin = Origin {
                file: file.to_string(),
                line: index + 1,
            };
            match classify(raw, &origin)? {
                Line::Blank => {}
                Line::Header(name) => self.sections.push(Section {
                    name: name.to_string(),
                    origin,
                    entries: Vec::new(),
                }),
                Line::Include(path) => self.include(path, origin, depth)?,
                Line::Option(key, value) => self.option(key, value, origin)?,
            }
        }
        Ok(())
    }

    fn include(&mut self, path: &str, origin: Origin, depth: usize) -> Result<(), JobFileError> {
        let path = expand(path, &origin, self.options)?;
        let resolved = resolve_include(&origin.file, &path);
        let shown = resolved.display().to_string();
        if depth >= INCLUDE_DEPTH_LIMIT {
            return Err(JobFileError::IncludeDepth {
                origin,
                file: shown,
                limit: INCLUDE_DEPTH_LIMIT,
            });
        }
        let text = read_include(&resolved).map_err(|e| JobFileError::Include {
            origin,
            file: shown.clone(),
            reason: e.to_string(),
        })?;
        self.read(&text, &shown, depth + 1)
    }

    fn option(
        &mut self,
        key: &str,
        value: Option<&str>,
        origin: Origin,
    ) -> Result<(), JobFileError> {
        let value = value
            .map(|v| expand(v, &origin, self.options))
            .transpose()?;
        let Some(section) = self.sections.last_mut() else {
            return Err(JobFileError::OutsideSection {
                origin,
                option: key.to_string(),
            });
        };
        section.entries.push(Entry {
            key: key.to_string(),
            value,
            origin,
        });
        Ok(())
    }
}

/// Largest included file read: job files are a few kilobytes, and a device such as
/// `/dev/zero` never ends.
const INCLUDE_SIZE_LIMIT: u64 = 16 << 20;

/// An included file's text, refused past [`INCLUDE_SIZE_LIMIT`].
fn read_include(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(INCLUDE_SIZE_LIMIT + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > INCLUDE_SIZE_LIMIT {
        return Err(std::io::Error::other(format!(
            "larger than {} MiB: expected a job file",
            INCLUDE_SIZE_LIMIT >> 20
        )));
    }
    Ok(text)
}

/// An include path relative to the including file's directory (absolute paths stay).
fn resolve_include(including: &str, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        return path.to_path_buf();
    }
    match Path::new(including).parent() {
        Some(dir) => dir.join(path),
        None => path.to_path_buf(),
    }
}

/// Strips a comment: a line starting with `;` or `#`, or one of them after whitespace.
fn strip_comment(line: &str) -> &str {
    let mut previous_blank = true;
    for (at, c) in line.char_indices() {
        if (c == ';' || c == '#') && previous_blank {
            return &line[..at];
        }
        previous_blank = c.is_whitespace();
    }
    line
}

fn classify<'a>(raw: &'a str, origin: &Origin) -> Result<Line<'a>, JobFileError> {
    let line = strip_comment(raw).trim();
    if line.is_empty() {
        return Ok(Line::Blank);
    }
    let syntax = || JobFileError::Syntax {
        origin: origin.clone(),
        found: raw.trim().to_string(),
    };
    if let Some(inner) = line.strip_prefix('[') {
        let name = inner.strip_suffix(']').ok_or_else(syntax)?.trim();
        return if name.is_empty() || name.contains(['[', ']']) {
            Err(syntax())
        } else {
            Ok(Line::Header(name))
        };
    }
    if let Some(path) = line.strip_prefix("include") {
        if path.starts_with(char::is_whitespace) {
            return Ok(Line::Include(path.trim()));
        }
    }
    let (key, value) = match line.split_once('=') {
        Some((key, value)) => (key.trim(), Some(value.trim())),
        None => (line, None),
    };
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        return Err(syntax());
    }
    Ok(Line::Option(key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_are_stripped_only_at_line_start_or_after_blanks() {
        assert_eq!(strip_comment("; all"), "");
        assert_eq!(strip_comment("numjobs=2  ; two"), "numjobs=2  ");
        assert_eq!(strip_comment("name=a#b"), "name=a#b");
        assert_eq!(strip_comment("x=1\t# tab"), "x=1\t");
    }
}
