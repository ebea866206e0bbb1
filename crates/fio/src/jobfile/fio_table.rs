//! fio's own option table, as data: the names and aliases of every option fio defines, general
//! or an engine's or a profile's, generated from fio's source (`options.c`, `cgroup.c`,
//! `engines/`, `profiles/`) by `bench/lib/fio-option-table.py` into `fio-options.tsv`; its
//! first line names the fio it came from (newer than the 3.33 installed here, so that the
//! examples people copy from fio's tree, with its newest options, are not refused).
//!
//! It lets the parser tell a misspelt option from a fio option ioslice does not act on: the
//! first is an error, with fio's suggestion, as fio refuses it (`Bad option <iodpeth=32>`,
//! `Did you mean iodepth?`); the second is a warning. fio suggests the general option nearest
//! by edit distance (the first of equals, in its table's order), and only when the distance is
//! at most half the name's length, rounded up (`string_distance_ok` in fio's `parse.c`).

/// The generated table: `option<TAB>alias<TAB>scope`, scope `general`, `profile:NAME` or the
/// engines' names.
const TABLE: &str = include_str!("fio-options.tsv");

/// One row of the table.
struct FioOption {
    name: &'static str,
    alias: &'static str,
    general: bool,
}

fn options() -> impl Iterator<Item = FioOption> {
    TABLE
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let name = fields.next()?;
            let alias = fields.next().unwrap_or("");
            let scope = fields.next().unwrap_or("");
            Some(FioOption {
                name,
                alias,
                general: scope.split(',').any(|s| s == "general"),
            })
        })
}

/// Whether fio knows `option`, by its name or its alias, as a general or an engine's option.
pub fn knows(option: &str) -> bool {
    options().any(|o| o.name == option || (!o.alias.is_empty() && o.alias == option))
}

/// fio's "did you mean" for an option it does not know, if any is near enough.
pub fn suggestion(option: &str) -> Option<&'static str> {
    let mut best: Option<(usize, &'static str)> = None;
    for candidate in options().filter(|o| o.general) {
        let distance = strsim::levenshtein(option, candidate.name);
        if best.is_none_or(|(nearest, _)| distance < nearest) {
            best = Some((distance, candidate.name));
        }
    }
    let (distance, name) = best?;
    (distance <= option.len().div_ceil(2)).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_are_known() {
        for option in [
            "iodepth",
            "rw",
            "readwrite",
            "bs",
            "blocksize",
            "hipri",
            "softrandommap",
        ] {
            assert!(knows(option), "{option}");
        }
        assert!(!knows("iodpeth"));
        assert!(!knows(""));
    }

    /// fio's suggestion is the nearest option, not the one meant: fio 3.33 answers a
    /// misspelt `blocksize` with `lockfile`. Ten common misspellings are checked against fio
    /// itself in the command line's tests (`fio_option_names.rs`).
    #[test]
    fn the_suggestion_is_the_nearest_general_option() {
        assert_eq!(suggestion("blcksize"), Some("lockfile"));
        assert_eq!(suggestion("iodpeth"), Some("iodepth"));
        assert_eq!(suggestion("zzzzzzzzzzzz"), None);
    }
}
