//! fio's own option table, as data: the names and aliases of every option fio defines, general
//! or an engine's or a profile's, generated from fio's source (`options.c`, `cgroup.c`,
//! `engines/`, `profiles/`) by `bench/lib/fio-option-table.py` into `fio-options.tsv`; its
//! first line names the fio it came from (newer than the 3.33 installed here, so that the
//! examples people copy from fio's tree, with its newest options, are not refused).
//!
//! Each row also carries the option's value type, the bounds fio declares for it and its
//! parsing priority ([`FioOption`]), which [`super::value_check`] checks values against and
//! `--showcmd` orders options by.
//!
//! It lets the parser tell a misspelt option from a fio option ioslice does not act on: the
//! first is an error, with fio's suggestion, as fio refuses it (`Bad option <iodpeth=32>`,
//! `Did you mean iodepth?`); the second is a warning. fio suggests the general option nearest
//! by edit distance (the first of equals, in its table's order), and only when the distance is
//! at most half the name's length, rounded up (`string_distance_ok` in fio's `parse.c`).

/// The generated table: `option<TAB>alias<TAB>scope<TAB>type<TAB>min<TAB>max<TAB>prio<TAB>values`,
/// scope `general`, `profile:NAME` or the engines' names, values the words a word option
/// takes separated by `|`.
const TABLE: &str = include_str!("fio-options.tsv");

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FioOption {
    /// fio's name for it.
    pub name: &'static str,
    /// Its other name, or empty.
    pub alias: &'static str,
    /// Whether it is a general option (not only an engine's or a profile's).
    pub general: bool,
    /// fio's value type: `int`, `ull`, `size`, `size_zone`, `time` (a bare number in
    /// microseconds), `time_s` (in seconds), `bool`, `str`, `str_multi`, `str_store`,
    /// `str_set`, `range`, `float_list`, `deprecated`, `soft_deprecated`, `unsupported`, or
    /// empty for a profile's own entry.
    pub kind: &'static str,
    /// The least value fio takes, where it declares one.
    pub min: Option<f64>,
    /// The greatest value fio takes, where it declares one.
    pub max: Option<f64>,
    /// fio's parsing priority: within a section, higher first (`kb_base` before sizes).
    pub prio: i32,
    /// The words fio takes (its `posval`), separated by `|`; empty when it lists none.
    pub values: &'static str,
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
            let kind = fields.next().unwrap_or("");
            let min = fields.next().and_then(|v| v.parse().ok());
            let max = fields.next().and_then(|v| v.parse().ok());
            let prio = fields.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            let values = fields.next().unwrap_or("");
            Some(FioOption {
                name,
                alias,
                general: scope.split(',').any(|s| s == "general"),
                kind,
                min,
                max,
                prio,
                values,
            })
        })
}

/// fio's row for `option`, found by its name or its alias.
pub fn lookup(option: &str) -> Option<FioOption> {
    options().find(|o| o.name == option || (!o.alias.is_empty() && o.alias == option))
}

/// fio's name for `option` (`blocksize` is `bs`), as fio's `--showcmd` and JSON write it;
/// a name fio does not know stays as written.
pub fn fio_name(option: &str) -> String {
    lookup(&option.to_ascii_lowercase()).map_or_else(|| option.to_string(), |o| o.name.to_string())
}

/// fio's parsing priority for `option` (0 for a name fio does not know): fio parses a
/// section's options highest first, keeping their order otherwise.
pub fn prio(option: &str) -> i32 {
    lookup(&option.to_ascii_lowercase()).map_or(0, |o| o.prio)
}

/// Whether fio knows `option`, by its name or its alias, as a general or an engine's option.
pub fn knows(option: &str) -> bool {
    lookup(option).is_some()
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

    #[test]
    fn rows_carry_fios_types_and_bounds() {
        let rwmixread = lookup("rwmixread").expect("rwmixread");
        assert_eq!((rwmixread.kind, rwmixread.max), ("int", Some(100.0)));
        let bs = lookup("blocksize").expect("bs by its alias");
        assert_eq!((bs.name, bs.kind, bs.min), ("bs", "ull", Some(1.0)));
        let direct = lookup("direct").expect("direct");
        assert_eq!(
            (direct.kind, direct.min, direct.max),
            ("bool", Some(0.0), Some(1.0))
        );
        assert_eq!(lookup("runtime").map(|o| o.kind), Some("time_s"));
        assert_eq!(lookup("nice").and_then(|o| o.min), Some(-20.0));
        assert_eq!(lookup("kb_base").map(|o| o.prio), Some(1));
        assert_eq!(lookup("filename").map(|o| o.prio), Some(-1));
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
