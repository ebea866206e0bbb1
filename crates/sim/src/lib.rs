//! ioslice-sim: the deterministic discrete-event simulator and its device models.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod device;
pub mod host;
pub mod layout;
pub mod page_cache;
pub mod preset;
pub mod readahead;
pub mod simulation;

mod config;
mod id_hash;
