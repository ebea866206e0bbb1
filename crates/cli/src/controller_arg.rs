//! `--controller`: which controller enforces the cgroups' weights.
//!
//! - `elevator` (the default): the elevator's own groups, as cfq and bfq schedule them (the
//!   other policies have no groups);
//! - `ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N]`: dm-ioband
//!   above the elevator, with dm-ioband's names and defaults (`weight`, 2048 (`token=0`), 4, 128; see
//!   `ioslice_core::ioband`);
//! - `elv-fq[:slice_sync=MS,slice_async=MS,group_idle=MS,fairness=0|1]`: elevator fair
//!   queuing, an elevator per group under one B-WF2Q+ tree of groups charged in disk time
//!   (100, 40, 8 ms and 1 by default; see `ioslice_core::elvfq`);
//! - `iocost[:rbps=N,rseqiops=N,rrandiops=N,wbps=N,wseqiops=N,wrandiops=N,rpct=P,rlat=US,wpct=P,wlat=US,min=P,max=P]`:
//!   blk-iocost above the elevator, with `io.cost.model`'s and `io.cost.qos`'s keys in
//!   cgroup v2's names and units (bytes/s and 4 KiB IOPS; percentages with up to two
//!   decimals; microseconds); a key not given takes the kernel's default for the device
//!   kind (see `ioslice_core::iocost`). Groups weigh their `io.weight` (`--cgroup
//!   G:weight=N`, 1..10000, 100 unless set).

use ioslice_core::elvfq::ElvFqSettings;
use ioslice_core::ioband::{Controller, IobandSettings, TokenPolicy};
use ioslice_core::iocost::qos::parse_percent;
use ioslice_core::iocost::IocostSettings;
use ioslice_core::spec::Spec;
use ioslice_core::time::ms;

/// What `--controller` expects, for error messages.
const EXPECTED: &str = "expected elevator, or ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N], or elv-fq[:slice_sync=MS,slice_async=MS,group_idle=MS,fairness=0|1], or iocost[:rbps=N,rseqiops=N,rrandiops=N,wbps=N,wseqiops=N,wrandiops=N,rpct=P,rlat=US,wpct=P,wlat=US,min=P,max=P] (settings comma-separated)";

/// Parse a `--controller` value; the error names the value and says what is expected.
pub fn parse(text: &str) -> Result<Controller, String> {
    let fail = |why: String| format!("--controller '{text}': {why}");
    let spec: Spec = text.parse().map_err(|e| fail(format!("{e}: {EXPECTED}")))?;
    let settings = &spec.settings;
    match (spec.name.as_str(), text.contains(':')) {
        ("elevator", false) => Ok(Controller::Elevator),
        ("ioband", _) => ioband(settings).map(Controller::Ioband).map_err(fail),
        ("elv-fq", _) => elv_fq(settings).map(Controller::ElvFq).map_err(fail),
        ("iocost", _) => iocost(settings).map(Controller::Iocost).map_err(fail),
        _ => Err(fail(EXPECTED.to_string())),
    }
}

fn ioband(settings: &[(String, String)]) -> Result<IobandSettings, String> {
    let mut ioband = IobandSettings::default();
    for (key, value) in settings {
        let (key, value) = (key.as_str(), value.as_str());
        match key {
            "policy" => {
                ioband.policy = TokenPolicy::from_name(value)
                    .ok_or_else(|| format!("policy '{value}': expected weight or weight-iosize"))?
            }
            "token" => ioband.token = number(key, value, 0, 1 << 30)?,
            "io_throttle" => ioband.io_throttle = number(key, value, 1, 4096)? as usize,
            "io_limit" => ioband.io_limit = number(key, value, 1, 4096)? as usize,
            other => return Err(format!("unknown setting '{other}': {EXPECTED}")),
        }
    }
    if ioband.io_throttle > ioband.io_limit {
        return Err(format!(
            "io_throttle {} is above io_limit {}: expected io_throttle <= io_limit",
            ioband.io_throttle, ioband.io_limit
        ));
    }
    Ok(ioband)
}

fn elv_fq(settings: &[(String, String)]) -> Result<ElvFqSettings, String> {
    let mut elv_fq = ElvFqSettings::default();
    for (key, value) in settings {
        let (key, value) = (key.as_str(), value.as_str());
        match key {
            "slice_sync" => elv_fq.slice_sync = ms(number(key, value, 1, 10_000)?),
            "slice_async" => elv_fq.slice_async = ms(number(key, value, 1, 10_000)?),
            "group_idle" => elv_fq.group_idle = ms(number(key, value, 0, 10_000)?),
            "fairness" => elv_fq.fairness = number(key, value, 0, 1)? == 1,
            other => return Err(format!("unknown setting '{other}': {EXPECTED}")),
        }
    }
    Ok(elv_fq)
}

fn iocost(settings: &[(String, String)]) -> Result<IocostSettings, String> {
    let mut iocost = IocostSettings::default();
    let (m, q) = (&mut iocost.model, &mut iocost.qos);
    for (key, value) in settings {
        let (key, value) = (key.as_str(), value.as_str());
        let bps = |key| number(key, value, 1, 1 << 40).map(Some);
        let iops = |key| number(key, value, 1, 100_000_000).map(Some);
        let lat = |key| number(key, value, 1, 10_000_000).map(Some);
        match key {
            "rbps" => m.rbps = bps(key)?,
            "rseqiops" => m.rseqiops = iops(key)?,
            "rrandiops" => m.rrandiops = iops(key)?,
            "wbps" => m.wbps = bps(key)?,
            "wseqiops" => m.wseqiops = iops(key)?,
            "wrandiops" => m.wrandiops = iops(key)?,
            "rpct" => q.rppm = Some(percent(key, value, 0, 100)?),
            "wpct" => q.wppm = Some(percent(key, value, 0, 100)?),
            "rlat" => q.rlat_us = lat(key)?,
            "wlat" => q.wlat_us = lat(key)?,
            "min" => q.min_ppm = Some(percent(key, value, 1, 10_000)?),
            "max" => q.max_ppm = Some(percent(key, value, 1, 10_000)?),
            other => return Err(format!("unknown setting '{other}': {EXPECTED}")),
        }
    }
    // Every device kind's default bounds are 1% and 10000%.
    let (min, max) = (
        q.min_ppm.unwrap_or(10_000),
        q.max_ppm.unwrap_or(100_000_000),
    );
    if min > max {
        return Err(format!(
            "min {}% is above max {}%: expected min <= max",
            min as f64 / 10_000.0,
            max as f64 / 10_000.0
        ));
    }
    Ok(iocost)
}

/// A percentage in `low..=high` with up to two decimals, in ppm.
fn percent(key: &str, value: &str, low: u64, high: u64) -> Result<u64, String> {
    parse_percent(value, high)
        .filter(|&ppm| ppm >= low * 10_000)
        .ok_or_else(|| {
            format!(
                "{key} '{value}': expected a percentage in {low}..={high} with up to two decimals"
            )
        })
}

fn number(key: &str, value: &str, min: u64, max: u64) -> Result<u64, String> {
    value
        .parse()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| format!("{key} '{value}': expected a whole number in {min}..={max}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_settings() {
        assert_eq!(parse("elevator"), Ok(Controller::Elevator));
        assert_eq!(
            parse("ioband"),
            Ok(Controller::Ioband(IobandSettings::default()))
        );
        assert_eq!(
            parse("ioband:policy=weight-iosize, token=4096,io_throttle=8,io_limit=64"),
            Ok(Controller::Ioband(IobandSettings {
                policy: TokenPolicy::WeightIosize,
                token: 4096,
                io_throttle: 8,
                io_limit: 64,
            }))
        );
    }

    #[test]
    fn elv_fq_settings() {
        assert_eq!(
            parse("elv-fq"),
            Ok(Controller::ElvFq(ElvFqSettings::default()))
        );
        assert_eq!(
            parse("elv-fq:slice_sync=50, slice_async=20,group_idle=0,fairness=0"),
            Ok(Controller::ElvFq(ElvFqSettings {
                slice_sync: ms(50),
                slice_async: ms(20),
                group_idle: 0,
                fairness: false,
            }))
        );
    }

    #[test]
    fn iocost_keys_in_cgroup_v2_names() {
        assert_eq!(
            parse("iocost"),
            Ok(Controller::Iocost(IocostSettings::default()))
        );
        let Ok(Controller::Iocost(s)) =
            parse("iocost:rbps=500000000,rrandiops=9000,rpct=95.5,rlat=5000,min=50,max=150.25")
        else {
            panic!("iocost parses");
        };
        assert_eq!(
            (s.model.rbps, s.model.rrandiops, s.model.wbps),
            (Some(500_000_000), Some(9_000), None)
        );
        assert_eq!(
            (s.qos.rppm, s.qos.rlat_us, s.qos.wppm),
            (Some(955_000), Some(5_000), None)
        );
        assert_eq!(
            (s.qos.min_ppm, s.qos.max_ppm),
            (Some(500_000), Some(1_502_500))
        );
        let text = ioslice_report::settings::controller_text(&Controller::Iocost(s));
        assert_eq!(
            text,
            "iocost:rbps=500000000,rrandiops=9000,rpct=95.50,rlat=5000,min=50,max=150.25"
        );
        assert_eq!(parse(&text), Ok(Controller::Iocost(s)));
    }

    #[test]
    fn iocost_errors_name_the_key_and_the_range() {
        assert_eq!(
            parse("iocost:rpct=101"),
            Err("--controller 'iocost:rpct=101': rpct '101': expected a percentage in 0..=100 with up to two decimals".into())
        );
        assert_eq!(
            parse("iocost:min=0.5"),
            Err("--controller 'iocost:min=0.5': min '0.5': expected a percentage in 1..=10000 with up to two decimals".into())
        );
        assert_eq!(
            parse("iocost:rlat=0"),
            Err(
                "--controller 'iocost:rlat=0': rlat '0': expected a whole number in 1..=10000000"
                    .into()
            )
        );
        assert_eq!(
            parse("iocost:wrandiops=many"),
            Err("--controller 'iocost:wrandiops=many': wrandiops 'many': expected a whole number in 1..=100000000".into())
        );
        assert_eq!(
            parse("iocost:min=90,max=80"),
            Err("--controller 'iocost:min=90,max=80': min 90% is above max 80%: expected min <= max".into())
        );
        assert_eq!(
            parse("iocost:ctrl=user"),
            Err(format!(
                "--controller 'iocost:ctrl=user': unknown setting 'ctrl': {EXPECTED}"
            ))
        );
    }

    /// What the report prints of a controller is what `--controller` takes back.
    #[test]
    fn the_reports_text_parses_back() {
        for controller in [
            Controller::Elevator,
            Controller::Ioband(IobandSettings::default()),
            Controller::ElvFq(ElvFqSettings::default()),
            Controller::ElvFq(ElvFqSettings {
                slice_sync: ms(60),
                slice_async: ms(20),
                group_idle: 0,
                fairness: false,
            }),
        ] {
            let text = ioslice_report::settings::controller_text(&controller);
            assert_eq!(parse(&text), Ok(controller), "{text}");
        }
        for (policy, token, io_throttle, io_limit) in [
            (TokenPolicy::Weight, 1 << 30, 1, 1),
            (TokenPolicy::WeightIosize, 4096, 8, 4096),
        ] {
            let controller = Controller::Ioband(IobandSettings {
                policy,
                token,
                io_throttle,
                io_limit,
            });
            let text = ioslice_report::settings::controller_text(&controller);
            assert_eq!(parse(&text), Ok(controller), "{text}");
        }
    }

    #[test]
    fn errors_name_the_value_and_what_is_expected() {
        assert_eq!(
            parse("dm-ioband"),
            Err(format!("--controller 'dm-ioband': {EXPECTED}"))
        );
        assert_eq!(
            parse("ioband:policy=time"),
            Err("--controller 'ioband:policy=time': policy 'time': expected weight or weight-iosize".into())
        );
        assert_eq!(
            parse("ioband:io_limit=0"),
            Err("--controller 'ioband:io_limit=0': io_limit '0': expected a whole number in 1..=4096".into())
        );
        assert_eq!(
            parse("ioband:io_throttle=64,io_limit=8"),
            Err("--controller 'ioband:io_throttle=64,io_limit=8': io_throttle 64 is above io_limit 8: expected io_throttle <= io_limit".into())
        );
        assert!(parse("elevator:x=1").is_err());
        assert!(parse("elevator:").is_err());
        assert_eq!(
            parse("ioband:token=0,token=4"),
            Err(format!(
                "--controller 'ioband:token=0,token=4': setting 'token' is given twice: {EXPECTED}"
            ))
        );
        assert_eq!(
            parse("elv-fq:fairness=2"),
            Err(
                "--controller 'elv-fq:fairness=2': fairness '2': expected a whole number in 0..=1"
                    .into()
            )
        );
        assert_eq!(
            parse("elv-fq:slice=5"),
            Err(format!(
                "--controller 'elv-fq:slice=5': unknown setting 'slice': {EXPECTED}"
            ))
        );
    }
}
