//! `--controller`: which controller enforces the cgroups' weights.
//!
//! - `elevator` (the default): the elevator's own groups, as cfq and bfq schedule them (the
//!   other policies have no groups);
//! - `ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N]`: dm-ioband
//!   above the elevator, with dm-ioband's names and defaults (`weight`, 2048, 4, 128; see
//!   `ioslice_core::ioband`).

use ioslice_core::ioband::{Controller, IobandSettings, TokenPolicy};

/// What `--controller` expects, for error messages.
const EXPECTED: &str = "expected elevator, or ioband[:policy=weight|weight-iosize,token=N,io_throttle=N,io_limit=N] (comma-separated)";

/// Parse a `--controller` value; the error names the value and says what is expected.
pub fn parse(text: &str) -> Result<Controller, String> {
    let fail = |why: String| format!("--controller '{text}': {why}");
    let (name, settings) = match text.split_once(':') {
        Some((name, settings)) => (name.trim(), Some(settings)),
        None => (text.trim(), None),
    };
    match (name, settings) {
        ("elevator", None) => Ok(Controller::Elevator),
        ("ioband", None) => Ok(Controller::Ioband(IobandSettings::default())),
        ("ioband", Some(settings)) => ioband(settings).map(Controller::Ioband).map_err(fail),
        _ => Err(fail(EXPECTED.to_string())),
    }
}

fn ioband(settings: &str) -> Result<IobandSettings, String> {
    let mut ioband = IobandSettings::default();
    for item in settings.split(',').map(str::trim) {
        let (key, value) = item
            .split_once('=')
            .ok_or_else(|| format!("setting '{item}' has no value: {EXPECTED}"))?;
        let value = value.trim();
        match key.trim() {
            "policy" => {
                ioband.policy = TokenPolicy::from_name(value)
                    .ok_or_else(|| format!("policy '{value}': expected weight or weight-iosize"))?
            }
            "token" => ioband.token = number(key, value, 1, 1 << 30)?,
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
    }
}
