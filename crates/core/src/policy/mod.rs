//! The policies, one module (or module folder) each.

pub mod deadline;
pub mod noop;
