//! Job timing state machine (being written).
