//! Error numbers by name, and fio's rule for which errors a job may go on after.
//!
//! fio's `continue_on_error=` says for which kinds of I/O (read, write, verify) a job goes on
//! after an error, and `ignore_error=` which errors those are; for a kind `ignore_error=` gives
//! no list, only `EIO` and `EILSEQ` are "non-fatal". An `EILSEQ` counts as a verify error
//! whatever the direction. (fio's `td_non_fatal_error` in `td_error.c`.)
//!
//! `ignore_error=` takes fio's syntax (`str_ignore_error_cb` and `ignore_error_type` in fio's
//! `options.c`): up to three lists separated by commas, for READ, WRITE and VERIFY in that
//! order, each a list of error names or numbers separated by colons. fio's own example,
//! `ignore_error=EAGAIN,ENOSPC:122`, goes on past `EAGAIN` on reads and past `ENOSPC` and 122
//! (`EDQUOT`) on writes. As in fio, a kind given a list is also added to the kinds
//! `continue_on_error=` covers, so that example goes on past `ENOSPC` on writes even without
//! `continue_on_error=`; a `continue_on_error=` read after it (later in the section, or in the
//! job's section after `[global]`) replaces the kinds again.
//!
//! The names and numbers themselves are [`ioslice_core::errno`]'s, re-exported here.

use crate::direction::DataDirection;

pub use ioslice_core::errno::{name, parse, EILSEQ, EIO, ERRNOS};

/// The kinds of error fio tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An error on a read.
    Read = 0,
    /// An error on a write.
    Write = 1,
    /// A verify failure (`EILSEQ`).
    Verify = 2,
}

impl ErrorKind {
    /// The three kinds, in the order of `ignore_error=`'s lists.
    pub const ALL: [Self; 3] = [Self::Read, Self::Write, Self::Verify];

    /// The kind of an error `errno` on an I/O in `direction`.
    pub fn of(direction: DataDirection, errno: i32) -> Self {
        match (errno, direction) {
            (EILSEQ, _) => Self::Verify,
            (_, DataDirection::Read) => Self::Read,
            _ => Self::Write,
        }
    }
}

/// A set of [`ErrorKind`]s: the kinds of error `continue_on_error=` lets a job go on after
/// (fio's `continue_on_error` bits). `ignore_error=` adds the kinds it gives a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ErrorKinds(u8);

impl ErrorKinds {
    /// `continue_on_error=none` (or `0`), the default: every error stops the job.
    pub const NONE: Self = Self(0);
    /// `continue_on_error=read`.
    pub const READ: Self = Self(1 << ErrorKind::Read as u8);
    /// `continue_on_error=write`.
    pub const WRITE: Self = Self(1 << ErrorKind::Write as u8);
    /// `continue_on_error=io`: reads and writes.
    pub const IO: Self = Self(Self::READ.0 | Self::WRITE.0);
    /// `continue_on_error=verify`.
    pub const VERIFY: Self = Self(1 << ErrorKind::Verify as u8);
    /// `continue_on_error=all` (or `1`).
    pub const ALL: Self = Self(Self::IO.0 | Self::VERIFY.0);

    /// `continue_on_error=`'s value: none, read, write, io, verify, all, or 0 (none) and 1 (all).
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "none" | "0" => Some(Self::NONE),
            "read" => Some(Self::READ),
            "write" => Some(Self::WRITE),
            "io" => Some(Self::IO),
            "verify" => Some(Self::VERIFY),
            "all" | "1" => Some(Self::ALL),
            _ => None,
        }
    }

    /// Whether `kind` is in the set.
    pub fn contains(self, kind: ErrorKind) -> bool {
        self.0 & (1 << kind as u8) != 0
    }

    /// The set with `kind` added.
    pub fn with(self, kind: ErrorKind) -> Self {
        Self(self.0 | 1 << kind as u8)
    }
}

/// `ignore_error=READ,WRITE,VERIFY`, each list of error names or numbers separated by colons
/// (fio's syntax and example: `EAGAIN,ENOSPC:122` is `EAGAIN` on reads, `ENOSPC` and 122 on
/// writes): one list per kind the value names, in the order read, write, verify; kinds after the
/// last comma are not named. An empty list (`,ENOSPC` names no read errors) means fio's default,
/// `EIO` and `EILSEQ`. As in fio, a list ends at its first empty item (`:ENOSPC` is an empty
/// read list; `ENOSPC::EIO` is `ENOSPC` alone). `None` for more than three lists, or an item
/// [`parse`] does not take.
pub fn parse_ignore_error(text: &str) -> Option<Vec<Vec<i32>>> {
    let lists: Vec<&str> = text.trim().split(',').collect();
    if lists.len() > ErrorKind::ALL.len() {
        return None;
    }
    lists
        .iter()
        .map(|list| {
            list.split(':')
                .map(str::trim)
                .take_while(|item| !item.is_empty())
                .map(parse)
                .collect()
        })
        .collect()
}

/// Whether a job goes on after error `errno` on an I/O in `direction` (fio's
/// `td_non_fatal_error`): `continue_on_error` (the kinds `continue_on_error=` named, with those
/// `ignore_error=` gave a list) must contain the error's kind, and the error must be in that
/// kind's `ignore_error` list, or be `EIO` or `EILSEQ` when the list is empty.
pub fn goes_on(
    continue_on_error: &ErrorKinds,
    ignore_error: &[Vec<i32>; 3],
    direction: DataDirection,
    errno: i32,
) -> bool {
    let kind = ErrorKind::of(direction, errno);
    let list = &ignore_error[kind as usize];
    continue_on_error.contains(kind)
        && if list.is_empty() {
            errno == EIO || errno == EILSEQ
        } else {
            list.contains(&errno)
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DataDirection::{Read, Write};

    const NONE: [Vec<i32>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    const ENOSPC: i32 = 28;

    /// `ignore_error=`'s lists as the job's three, kinds not named left empty.
    fn lists(text: &str) -> [Vec<i32>; 3] {
        let mut all = NONE;
        for (kind, list) in parse_ignore_error(text)
            .expect("parses")
            .into_iter()
            .enumerate()
        {
            all[kind] = list;
        }
        all
    }

    #[test]
    fn only_eio_and_eilseq_are_non_fatal_by_default() {
        let all = ErrorKinds::ALL;
        assert!(goes_on(&all, &NONE, Read, EIO));
        assert!(goes_on(&all, &NONE, Write, EILSEQ), "a verify error");
        assert!(!goes_on(&all, &NONE, Write, ENOSPC), "fatal by default");
        assert!(!goes_on(&ErrorKinds::NONE, &NONE, Read, EIO));
        let read = ErrorKinds::READ;
        assert!(goes_on(&read, &NONE, Read, EIO) && !goes_on(&read, &NONE, Write, EIO));
        let write = ErrorKinds::WRITE;
        assert!(goes_on(&write, &NONE, Write, EIO) && !goes_on(&write, &NONE, Read, EIO));
        let io = ErrorKinds::IO;
        assert!(goes_on(&io, &NONE, Read, EIO) && !goes_on(&io, &NONE, Read, EILSEQ));
        let verify = ErrorKinds::VERIFY;
        assert!(goes_on(&verify, &NONE, Read, EILSEQ) && !goes_on(&verify, &NONE, Read, EIO));
    }

    #[test]
    fn continue_on_error_takes_fios_names() {
        let parsed: Vec<_> = [
            "none", "0", "read", "write", "io", "verify", "all", "1", "x", "",
        ]
        .into_iter()
        .map(ErrorKinds::parse)
        .collect();
        let expected = [
            Some(ErrorKinds::NONE),
            Some(ErrorKinds::NONE),
            Some(ErrorKinds::READ),
            Some(ErrorKinds::WRITE),
            Some(ErrorKinds::IO),
            Some(ErrorKinds::VERIFY),
            Some(ErrorKinds::ALL),
            Some(ErrorKinds::ALL),
            None,
            None,
        ];
        assert_eq!(parsed, expected);
        assert_eq!(ErrorKinds::NONE.with(ErrorKind::Read), ErrorKinds::READ);
        assert_eq!(ErrorKinds::READ.with(ErrorKind::Write), ErrorKinds::IO);
        let write_verify = ErrorKinds::VERIFY.with(ErrorKind::Write);
        assert_eq!(
            ErrorKind::ALL.map(|kind| write_verify.contains(kind)),
            [false, true, true]
        );
    }

    #[test]
    fn fios_example_is_eagain_on_reads_and_enospc_and_122_on_writes() {
        // fio's HOWTO: "ignore_error=EAGAIN,ENOSPC:122 ... will ignore EAGAIN from READ, and
        // ENOSPC and 122(EDQUOT) from WRITE".
        assert_eq!(
            parse_ignore_error("EAGAIN,ENOSPC:122"),
            Some(vec![vec![11], vec![ENOSPC, 122]])
        );
        let lists = lists("EAGAIN,ENOSPC:122");
        let all = ErrorKinds::ALL;
        assert!(goes_on(&all, &lists, Read, 11));
        assert!(!goes_on(&all, &lists, Read, EIO), "the list replaces EIO");
        assert!(!goes_on(&all, &lists, Read, ENOSPC), "ENOSPC is a write's");
        assert!(goes_on(&all, &lists, Write, ENOSPC));
        assert!(goes_on(&all, &lists, Write, 122));
        assert!(!goes_on(&all, &lists, Write, 11), "EAGAIN is a read's");
        assert!(
            goes_on(&all, &lists, Write, EILSEQ),
            "verify keeps its default"
        );
        // The kind must be covered: with only reads covered, ENOSPC on a write stops.
        assert!(!goes_on(&ErrorKinds::READ, &lists, Write, ENOSPC));
    }

    #[test]
    fn a_single_list_is_the_read_list() {
        // `ignore_error=ENOSPC` is ENOSPC on reads: under continue_on_error=write, fio stops
        // at the first ENOSPC on a write (exit 1, total_err 1).
        assert_eq!(parse_ignore_error("ENOSPC"), Some(vec![vec![ENOSPC]]));
        let lists = lists("ENOSPC");
        assert!(!goes_on(&ErrorKinds::WRITE, &lists, Write, ENOSPC));
        assert!(goes_on(&ErrorKinds::WRITE, &lists, Write, EIO));
        assert!(goes_on(&ErrorKinds::READ, &lists, Read, ENOSPC));
    }

    #[test]
    fn empty_lists_and_items_follow_fio() {
        // A leading comma leaves the read list empty: fio went on past ENOSPC on writes.
        assert_eq!(
            parse_ignore_error(",ENOSPC"),
            Some(vec![vec![], vec![ENOSPC]])
        );
        // A trailing comma names an empty verify list; a trailing colon ends the list.
        assert_eq!(
            parse_ignore_error(",ENOSPC,"),
            Some(vec![vec![], vec![ENOSPC], vec![]])
        );
        assert_eq!(
            parse_ignore_error(",ENOSPC:"),
            Some(vec![vec![], vec![ENOSPC]])
        );
        // A list ends at its first empty item: fio stopped at ENOSPC for ":ENOSPC" and
        // ",:ENOSPC", and for ",EIO::ENOSPC", and did not read EBOGUS in ",ENOSPC::EBOGUS".
        assert_eq!(parse_ignore_error(":ENOSPC"), Some(vec![vec![]]));
        assert_eq!(parse_ignore_error(",:ENOSPC"), Some(vec![vec![], vec![]]));
        assert_eq!(
            parse_ignore_error(",EIO::ENOSPC"),
            Some(vec![vec![], vec![EIO]])
        );
        assert_eq!(
            parse_ignore_error(",ENOSPC::EBOGUS"),
            Some(vec![vec![], vec![ENOSPC]])
        );
        assert_eq!(parse_ignore_error(""), Some(vec![vec![]]));
    }

    #[test]
    fn numbers_are_decimal_hex_or_negative() {
        // fio 3.33 read ",28" and ",-28" as ENOSPC; fio 3.38 and later also read 0x1c.
        assert_eq!(parse_ignore_error(",28"), Some(vec![vec![], vec![ENOSPC]]));
        assert_eq!(parse_ignore_error(",-28"), Some(vec![vec![], vec![ENOSPC]]));
        assert_eq!(
            parse_ignore_error(",0x1c"),
            Some(vec![vec![], vec![ENOSPC]])
        );
        assert_eq!(parse("0X1C"), Some(ENOSPC));
        assert_eq!(parse(" 122 "), Some(122));
        assert_eq!(parse("einval"), Some(22));
        assert_eq!(parse("EDQUOT"), Some(122));
        assert_eq!(name(22), Some("EINVAL"));
    }

    #[test]
    fn bad_values_are_refused() {
        // fio: "Unknown error EBOGUS, please use number value" and "Illegal error type" (four
        // lists), each followed by "fio: failed parsing ignore_error=..." and exit status 1.
        for bad in [
            ",EBOGUS",
            ",ENOSPC:EBOGUS",
            ",ENOSPC,EIO,EIO",
            "1,2,3,4",
            ",0",
            ",28abc",
            ",0x",
            ",-ENOSPC",
        ] {
            assert_eq!(parse_ignore_error(bad), None, "{bad}");
        }
    }
}
