//! The direction of one I/O ([`DataDirection`]: read, write or trim), fio's data direction
//! (`enum fio_ddir` in fio's `io_ddir.h`).
//!
//! It sits below the modules that use it: the pattern (`pattern`) issues each I/O in a
//! direction, and the error rules (`errno`) tell a read's error from a write's by it.
//! `pattern` names it too (`pattern::DataDirection`), beside the I/O units
//! (`IoUnit`) that carry it.

/// The direction of one I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataDirection {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A trim (discard).
    Trim,
}
