//! The policies, one module each.
