//! noop (being written).
