//! The policies, one module (or module folder) each.

pub mod anticipatory;
pub mod bfq;
pub mod cfq;
pub mod deadline;
pub mod kyber;
pub mod mq_deadline;
pub mod noop;
pub mod zone_lock;
