//! The request-id map lives in the core crate, where the policies use it too.

pub use ioslice_core::id_map::IdMap;
