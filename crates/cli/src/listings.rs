//! The listings: `ioslice devices` (every preset and parameter with its source, and the
//! host's settings) and `ioslice schedulers` (every policy and tunable).

use std::fmt::Write as _;

use ioslice_core::SCHEDULERS;
use ioslice_sim::preset::presets;

/// `ioslice devices`: every preset and parameter with its source.
pub fn devices() -> String {
    let mut out = String::new();
    for preset in presets() {
        let _ = writeln!(out, "sim:{}  {}", preset.name, preset.summary);
        let width = preset
            .params
            .iter()
            .map(|p| p.name.len())
            .max()
            .unwrap_or(0);
        for param in &preset.params {
            let value = format!("{} {}", param.value, param.unit);
            let _ = writeln!(
                out,
                "    {:width$}  {:>18}  {}",
                param.name,
                value.trim_end(),
                param.source,
                width = width
            );
        }
        out.push('\n');
    }
    out.push_str("Override any parameter: --device sim:PRESET:key=value,key=value\n\n");
    out.push_str("The simulated host (--host key=value,...):\n");
    let _ = write!(out, "{}", ioslice_sim::host::HostKeys);
    out
}

/// `ioslice schedulers`: every policy and tunable with its default and unit.
pub fn schedulers() -> String {
    let mut out = String::new();
    for info in SCHEDULERS {
        let aliases = if info.aliases.is_empty() {
            String::new()
        } else {
            format!(" (alias {})", info.aliases.join(", "))
        };
        let _ = writeln!(out, "{}{}  {}", info.name, aliases, info.summary);
        for def in info.tunables {
            let _ = writeln!(
                out,
                "    {:16} default {:>6}  [{}..={}] {:10}  {}",
                def.name,
                def.format_value(def.default),
                def.format_value(def.min),
                def.format_value(def.max),
                def.unit,
                def.help
            );
        }
        out.push('\n');
    }
    out.push_str("Set tunables: --sched NAME:tunable=value,tunable=value\n\n");
    out.push_str(CONTROLLERS);
    out
}

/// The controllers `--controller` selects, with their settings and defaults.
const CONTROLLERS: &str = "\
Controllers (--controller NAME[:key=value,...]; groups' weights from --cgroup G:weight=N):
elevator  the elevator's own groups (cfq's and bfq's; the others have none), the default
ioband    dm-ioband above the elevator: tokens per epoch by weight
    policy           weight | weight-iosize (default weight)
    token            token pool (default 0: 2048)
    io_throttle      below this many requests in progress, requests pass (default 4)
    io_limit         at this many in progress nothing passes (default 128)
elv-fq    elevator fair queuing: an elevator per group under one B-WF2Q+ tree, charged in disk time
    slice_sync       ms (default 100)
    slice_async      ms (default 40)
    group_idle       ms (default 8)
    fairness         0 | 1 (default 1)
iocost    blk-iocost above the elevator: each request's modelled cost charged to its group's
          vtime at its share by io.weight (1..10000, default 100); vrate from device saturation
    rbps rseqiops rrandiops wbps wseqiops wrandiops
                     io.cost.model: bytes/s and 4 KiB IOPS (default: the kernel's autop set for
                     the device kind: hdd if rotational, ssd_qd1 at queue depth 1, else ssd_dfl)
    rpct rlat wpct wlat
                     io.cost.qos: latency percentile (0..100, 0 = none) and target in us
                     (default 0 and 250000 on hdd, 0 and 25000 on ssd)
    min max          io.cost.qos: vrate bounds in percent (1..10000; default 1 and 10000)
";
