//! deadline (being written).
