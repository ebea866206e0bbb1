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
    out.push_str("Set tunables: --sched NAME:tunable=value,tunable=value\n");
    out
}
