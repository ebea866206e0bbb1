//! I/O pattern generation (being written).
