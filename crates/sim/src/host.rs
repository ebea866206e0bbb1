//! The simulated host's settings, as `--host key=value,...` gives them: memory and
//! writeback (the page cache), read-ahead, the host's reaction time, the block layer around
//! the elevator (single queue or blk-mq, and when blk-mq runs the queue after a completion),
//! how the kernel marks O_DIRECT writes, and a driver queue in front of the device's own.
//!
//! Every key names the Linux setting it models, in that setting's unit. The settings land in
//! [`SimConfig`]; the kinds of block layer and of O_DIRECT write marking are defined with it
//! and named here too ([`BlockLayer`], [`DirectWrites`]).

use std::fmt;

use ioslice_core::spec::{parse_settings, EmptyItems, SpecError};

use crate::config::SimConfig;
pub use crate::config::{BlockLayer, DirectWrites};

/// One `key`: its unit and what it sets.
struct HostKey {
    name: &'static str,
    expects: &'static str,
    help: &'static str,
    apply: fn(&mut SimConfig, &str) -> Option<()>,
}

const KEYS: &[HostKey] = &[
    HostKey {
        name: "memory_mib",
        expects: "MiB, 1..=16777216",
        help: "memory the dirty ratios are percentages of (default 2048)",
        apply: |config, value| {
            let mib = integer(value, 1, 1 << 24)?;
            config.page_cache.memory_bytes = mib << 20;
            Some(())
        },
    },
    HostKey {
        name: "dirty_ratio",
        expects: "percent, 1..=100",
        help: "vm.dirty_ratio: writers wait at this share of memory dirty (default 10)",
        apply: |config, value| {
            config.page_cache.dirty_ratio = integer(value, 1, 100)?;
            Some(())
        },
    },
    HostKey {
        name: "dirty_background_ratio",
        expects: "percent, 0..=100",
        help: "vm.dirty_background_ratio: the flusher starts here (default 5)",
        apply: |config, value| {
            config.page_cache.dirty_background_ratio = integer(value, 0, 100)?;
            Some(())
        },
    },
    HostKey {
        name: "nr_requests",
        expects: "requests, 1..=65536",
        help: "the queue's nr_requests: writeback requests outstanding at most (default 128)",
        apply: |config, value| {
            config.page_cache.nr_requests = integer(value, 1, 65_536)? as usize;
            Some(())
        },
    },
    HostKey {
        name: "max_sectors_kb",
        expects: "KiB, 4..=65536",
        help: "largest writeback request (default 512)",
        apply: |config, value| {
            config.page_cache.max_write_bytes = integer(value, 4, 65_536)? << 10;
            Some(())
        },
    },
    HostKey {
        name: "read_ahead_kb",
        expects: "KiB, 0..=65536",
        help: "read-ahead window of buffered sequential reads; 0 turns it off (default 128)",
        apply: |config, value| {
            config.page_cache.read_ahead_bytes = integer(value, 0, 65_536)? << 10;
            Some(())
        },
    },
    HostKey {
        name: "host_latency_us",
        expects: "µs, 0..=1000000",
        help: "from a completion to the process's next submission (default 20)",
        apply: |config, value| {
            config.host_latency = integer(value, 0, 1_000_000)? * 1_000;
            Some(())
        },
    },
    HostKey {
        name: "block_layer",
        expects: "single-queue or blk-mq",
        help: "the block layer around the elevator (default: the policy's own, blk-mq for bfq \
               and mq-deadline, single-queue for the 2.6 elevators)",
        apply: |config, value| {
            config.block_layer = Some(match value {
                "single-queue" => BlockLayer::SingleQueue,
                "blk-mq" => BlockLayer::BlkMq,
                _ => return None,
            });
            Some(())
        },
    },
    HostKey {
        name: "queue_run_delay_us",
        expects: "µs, 0..=1000000",
        help: "from a completion to the elevator's next dispatch when no submission comes \
               first (default: 40 on blk-mq, its deferred queue run; 0 on the single queue, \
               whose completion path dispatched at once)",
        apply: |config, value| {
            config.queue_run_delay = Some(integer(value, 0, 1_000_000)? * 1_000);
            Some(())
        },
    },
    HostKey {
        name: "driver_queue",
        expects: "commands, 0..=65536",
        help: "commands the host's driver takes before the device's own queue, first come \
               first served; the elevator sees this depth (128: a loop device over ioslice \
               emulate; default 0, none)",
        apply: |config, value| {
            config.driver_queue = integer(value, 0, 65_536)? as usize;
            Some(())
        },
    },
    HostKey {
        name: "direct_writes",
        expects: "sync or async",
        help: "how O_DIRECT writes reach the elevator: sync (Linux since Dec 2004, default) \
               or async (the 2.6.10-era kernels of seed 003)",
        apply: |config, value| {
            config.direct_writes = match value {
                "sync" => DirectWrites::Sync,
                "async" => DirectWrites::Async,
                _ => return None,
            };
            Some(())
        },
    },
];

fn integer(value: &str, min: u64, max: u64) -> Option<u64> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
}

/// A bad `--host` setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostError {
    /// Not `key=value`.
    #[error("host setting '{0}' is not key=value")]
    Syntax(String),
    /// Otherwise not `key=value,...` (an empty key or value, a key twice).
    #[error("host settings '{text}': {reason}")]
    Spec {
        /// The whole list.
        text: String,
        /// What is wrong with it.
        reason: SpecError,
    },
    /// No such key.
    #[error("unknown host setting '{name}'; known: {valid}")]
    UnknownKey {
        /// The key given.
        name: String,
        /// Every key.
        valid: String,
    },
    /// A value out of range or of the wrong kind.
    #[error("host setting {name}={value}: expected {expects}")]
    BadValue {
        /// The key.
        name: String,
        /// The value given.
        value: String,
        /// What is expected.
        expects: &'static str,
    },
}

/// Apply `key=value,...` to a configuration. Empty items (`a=1,,b=2`) are skipped, as they
/// always have been here.
pub fn apply(config: &mut SimConfig, settings: &str) -> Result<(), HostError> {
    let items = parse_settings(settings, EmptyItems::Skip).map_err(|e| match e {
        SpecError::MissingEquals { item } => HostError::Syntax(item),
        reason => HostError::Spec {
            text: settings.to_string(),
            reason,
        },
    })?;
    for (name, value) in &items {
        let key =
            KEYS.iter()
                .find(|key| key.name == name)
                .ok_or_else(|| HostError::UnknownKey {
                    name: name.to_string(),
                    valid: KEYS.iter().map(|k| k.name).collect::<Vec<_>>().join(", "),
                })?;
        (key.apply)(config, value).ok_or_else(|| HostError::BadValue {
            name: name.to_string(),
            value: value.to_string(),
            expects: key.expects,
        })?;
    }
    Ok(())
}

/// Every host setting with its unit and meaning, one per line, for `--help` and docs.
pub struct HostKeys;

impl fmt::Display for HostKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for key in KEYS {
            writeln!(f, "  {:<24} {:<22} {}", key.name, key.expects, key.help)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> SimConfig {
        SimConfig::new(
            1,
            "noop".parse().expect("noop"),
            "sim:null".parse().expect("null"),
        )
    }

    #[test]
    fn settings_apply_in_their_units() {
        let mut config = config();
        apply(
            &mut config,
            "memory_mib=512, dirty_ratio=20,read_ahead_kb=0,host_latency_us=5,direct_writes=async",
        )
        .expect("valid");
        assert_eq!(config.page_cache.memory_bytes, 512 << 20);
        assert_eq!(config.page_cache.dirty_ratio, 20);
        assert_eq!(config.page_cache.read_ahead_bytes, 0);
        assert_eq!(config.host_latency, 5_000);
        assert_eq!(config.direct_writes, DirectWrites::Async);
    }

    #[test]
    fn errors_name_the_setting_and_what_is_expected() {
        let mut config = config();
        let unknown = apply(&mut config, "swappiness=60").unwrap_err().to_string();
        assert!(unknown.contains("'swappiness'") && unknown.contains("dirty_ratio"));
        let range = apply(&mut config, "dirty_ratio=0").unwrap_err().to_string();
        assert_eq!(
            range,
            "host setting dirty_ratio=0: expected percent, 1..=100"
        );
        let kind = apply(&mut config, "direct_writes=maybe")
            .unwrap_err()
            .to_string();
        assert_eq!(
            kind,
            "host setting direct_writes=maybe: expected sync or async"
        );
        let syntax = apply(&mut config, "memory").unwrap_err().to_string();
        assert_eq!(syntax, "host setting 'memory' is not key=value");
        let twice = apply(&mut config, "dirty_ratio=20,dirty_ratio=30")
            .unwrap_err()
            .to_string();
        assert_eq!(
            twice,
            "host settings 'dirty_ratio=20,dirty_ratio=30': setting 'dirty_ratio' is given twice"
        );
        apply(&mut config, "dirty_ratio=20,,read_ahead_kb=0,").expect("empty items skipped");
    }
}
