//! How a job's random offsets are spread, as its job file asks: fio's `random_distribution=`
//! (uniform, `zipf:THETA`, `pareto:H`, `normal:DEV`, each with an optional `:CENTER`, and the
//! zoned forms `zoned:ACCESS/SIZE%:…` and `zoned_abs:ACCESS/BYTES:…`, per direction) and
//! `random_generator=`. The values are read as fio 3.33's `str_random_distribution_cb`,
//! `parse_zoned_distribution` and `zone_split_ddir` read them (`options.c`): the same defaults
//! (theta 1.1, h 0.2, deviation 0), the same ranges, and zone percentages that must add up to
//! 100. The generators that draw from them are in `crate::pattern::offsets`.

/// fio's default zipf theta (`FIO_DEF_ZIPF`).
pub const DEFAULT_ZIPF_THETA: f64 = 1.1;
/// fio's default pareto power (`FIO_DEF_PARETO`).
pub const DEFAULT_PARETO_H: f64 = 0.2;

/// `random_distribution=`: which blocks random I/O goes to, and how often.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RandomDistribution {
    /// `random` (fio's default): every block alike.
    #[default]
    Uniform,
    /// `zipf:THETA[:CENTER]`.
    Zipf {
        /// The skew; fio refuses 1.
        theta: f64,
        /// Where the hottest rank lands, as a fraction of the file; random when `None`.
        center: Option<f64>,
    },
    /// `pareto:H[:CENTER]`.
    Pareto {
        /// The power, strictly between 0 and 1.
        h: f64,
        /// As for zipf.
        center: Option<f64>,
    },
    /// `normal:DEV[:CENTER]` (fio's gauss generator).
    Normal {
        /// The deviation, a percentage of the file from 0 (inclusive) to 100.
        deviation: f64,
        /// As for zipf; fio's default is 0.5.
        center: Option<f64>,
    },
    /// `zoned:…` (sizes in percent of the file) or `zoned_abs:…` (sizes in bytes), per
    /// direction [read, write, trim]; a direction with no zones is uniform.
    Zoned {
        /// Sizes in bytes (`zoned_abs`) rather than percent (`zoned`).
        absolute: bool,
        /// Each direction's zones, in file order.
        zones: [Vec<ZoneShare>; 3],
    },
}

impl RandomDistribution {
    /// Whether fio keeps a random map for it: only the uniform distribution has one
    /// (fio sets `norandommap` for every other, `init.c`).
    pub fn keeps_random_map(&self) -> bool {
        matches!(self, Self::Uniform)
    }
}

/// One zone of a zoned distribution: the share of accesses it takes and its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZoneShare {
    /// Percent of the direction's random accesses.
    pub access: u32,
    /// Percent of the region (`zoned`) or bytes (`zoned_abs`).
    pub size: u64,
}

/// `random_generator=`: the generator fio draws uniform offsets with. ioslice draws from its
/// own seeded generator whichever is named; `lfsr` keeps its meaning of visiting every block
/// once a pass even under `norandommap`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RandomGenerator {
    /// `tausworthe` (fio's default).
    #[default]
    Tausworthe,
    /// `lfsr`: a maximal-length sequence, each block once a pass, without a map.
    Lfsr,
    /// `tausworthe64`.
    Tausworthe64,
}

impl RandomGenerator {
    /// Reads `tausworthe`, `lfsr` or `tausworthe64`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "tausworthe" => Some(Self::Tausworthe),
            "lfsr" => Some(Self::Lfsr),
            "tausworthe64" => Some(Self::Tausworthe64),
            _ => None,
        }
    }
}

/// Reads a `random_distribution=` value, `bytes_of` reading `zoned_abs`'s byte counts (with
/// the job's size suffixes); the error says what was expected.
pub fn parse(
    text: &str,
    bytes_of: impl Fn(&str) -> Option<u64>,
) -> Result<RandomDistribution, String> {
    let text = text.trim();
    let (name, rest) = match text.split_once(':') {
        Some((name, rest)) => (name.trim(), Some(rest)),
        None => (text, None),
    };
    match name {
        "random" => Ok(RandomDistribution::Uniform),
        "zipf" => {
            let (theta, center) = value_and_center(rest, DEFAULT_ZIPF_THETA)?;
            if theta == 1.0 {
                return Err("a zipf theta other than 1, such as zipf:1.2".into());
            }
            Ok(RandomDistribution::Zipf { theta, center })
        }
        "pareto" => {
            let (h, center) = value_and_center(rest, DEFAULT_PARETO_H)?;
            if h <= 0.0 || h >= 1.0 {
                return Err("a pareto power between 0 and 1 (exclusive), such as pareto:0.9".into());
            }
            Ok(RandomDistribution::Pareto { h, center })
        }
        "normal" => {
            let (deviation, center) = value_and_center(rest, 0.0)?;
            if !(0.0..100.0).contains(&deviation) {
                return Err("a normal deviation from 0 to under 100, such as normal:5".into());
            }
            Ok(RandomDistribution::Normal { deviation, center })
        }
        "zoned" | "zoned_abs" => {
            let absolute = name == "zoned_abs";
            let zones = zoned(rest.unwrap_or(""), absolute, &bytes_of)?;
            Ok(RandomDistribution::Zoned { absolute, zones })
        }
        _ => Err(
            "one of random, zipf[:THETA[:CENTER]], pareto[:H[:CENTER]], normal[:DEV[:CENTER]], zoned:ACCESS/SIZE%:…, zoned_abs:ACCESS/BYTES:…"
                .into(),
        ),
    }
}

/// `VALUE[:CENTER]` after a distribution's name; `default` when absent.
fn value_and_center(rest: Option<&str>, default: f64) -> Result<(f64, Option<f64>), String> {
    let Some(rest) = rest.filter(|r| !r.trim().is_empty()) else {
        return Ok((default, None));
    };
    let number = |t: &str| {
        t.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("a number where '{}' is", t.trim()))
    };
    let (value, center) = match rest.split_once(':') {
        Some((value, center)) => (number(value)?, Some(number(center)?)),
        None => (number(rest)?, None),
    };
    if center.is_some_and(|c| !(0.0..=1.0).contains(&c)) {
        return Err("a distribution center from 0 to 1, such as zipf:1.2:0.25".into());
    }
    Ok((value, center))
}

/// The zones for read, write and trim: one list applies to all three, as fio's
/// `str_split_parse` applies it; `a,b` gives trim the write list.
fn zoned(
    text: &str,
    absolute: bool,
    bytes_of: &impl Fn(&str) -> Option<u64>,
) -> Result<[Vec<ZoneShare>; 3], String> {
    let pieces: Vec<&str> = text.split(',').collect();
    if pieces.len() > 3 {
        return Err("at most three zone lists (read,write,trim)".into());
    }
    let last = pieces.len() - 1;
    let mut out: [Vec<ZoneShare>; 3] = Default::default();
    for (slot, zones) in out.iter_mut().enumerate() {
        *zones = zone_list(pieces[slot.min(last)], absolute, bytes_of)?;
    }
    Ok(out)
}

/// fio's most zones in one list (`ZONESPLIT_MAX`).
const MAX_ZONES: usize = 256;

/// One direction's `ACCESS/SIZE:…` list. Access percentages must add up to 100; zones
/// without a size (or `zoned` sizes of 0) share what the others leave of 100 % equally.
fn zone_list(
    text: &str,
    absolute: bool,
    bytes_of: &impl Fn(&str) -> Option<u64>,
) -> Result<Vec<ZoneShare>, String> {
    let example = if absolute {
        "zoned_abs:60/20g:30/100g:10/500g"
    } else {
        "zoned:60/10:30/20:8/30:2/40"
    };
    let mut zones = Vec::new();
    let mut missing = 0usize;
    for item in text.split(':').map(str::trim).take_while(|i| !i.is_empty()) {
        let bad = || format!("zones such as {example}, where '{item}' is");
        let (access, size) = match item.split_once('/') {
            // `20/` with nothing after the slash: a zone without a size, as fio reads it.
            Some((access, size)) => (access, Some(size.trim()).filter(|s| !s.is_empty())),
            None => (item, None),
        };
        let access = access.trim().parse::<u32>().map_err(|_| bad())?;
        let size = match size {
            Some(bytes) if absolute => Some(bytes_of(bytes).ok_or_else(bad)?),
            Some(pct) => Some(pct.parse::<u64>().map_err(|_| bad())?.min(100)).filter(|p| *p > 0),
            None if absolute => Some(0),
            None => None,
        };
        missing += usize::from(size.is_none());
        zones.push(ZoneShare {
            access,
            size: size.unwrap_or(u64::MAX),
        });
        if zones.len() == MAX_ZONES {
            break;
        }
    }
    check_shares(&mut zones, missing, absolute, example)?;
    Ok(zones)
}

/// fio's checks: access (and `zoned` size) percentages not above 100, access exactly 100;
/// then the missing sizes filled.
fn check_shares(
    zones: &mut [ZoneShare],
    missing: usize,
    absolute: bool,
    example: &str,
) -> Result<(), String> {
    if zones.is_empty() {
        return Ok(());
    }
    let access: u64 = zones.iter().map(|z| u64::from(z.access)).sum();
    let sizes: u64 = zones
        .iter()
        .filter(|z| z.size != u64::MAX)
        .map(|z| z.size)
        .sum();
    if access != 100 || (!absolute && sizes > 100) {
        return Err(format!(
            "access percentages adding up to 100{} (got {access}), such as {example}",
            if absolute {
                ""
            } else {
                " and sizes to at most 100"
            }
        ));
    }
    if missing > 0 {
        let share = (100 - sizes) / missing as u64;
        for zone in zones.iter_mut().filter(|z| z.size == u64::MAX) {
            zone.size = share;
        }
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Sizes with a `k` or `m` suffix, in units of 1024 (the job file's reader is not
    /// needed for these).
    pub(crate) fn bytes(text: &str) -> Option<u64> {
        let (number, unit) = match text.strip_suffix('k') {
            Some(n) => (n, 1 << 10),
            None => (text.strip_suffix('m')?, 1 << 20),
        };
        number.parse::<u64>().ok().map(|n| n * unit)
    }

    #[test]
    fn skewed_values_with_defaults_and_centers() {
        assert_eq!(
            parse("zipf", bytes),
            Ok(RandomDistribution::Zipf {
                theta: 1.1,
                center: None
            })
        );
        assert_eq!(
            parse("zipf:1.2:0.25", bytes),
            Ok(RandomDistribution::Zipf {
                theta: 1.2,
                center: Some(0.25)
            })
        );
        assert_eq!(
            parse("pareto:0.9", bytes),
            Ok(RandomDistribution::Pareto {
                h: 0.9,
                center: None
            })
        );
        assert_eq!(
            parse("normal", bytes),
            Ok(RandomDistribution::Normal {
                deviation: 0.0,
                center: None
            })
        );
        assert_eq!(parse("random", bytes), Ok(RandomDistribution::Uniform));
    }

    #[test]
    fn values_fio_refuses_are_refused() {
        for bad in [
            "zipf:1",
            "zipf:x",
            "pareto:1",
            "pareto:0",
            "normal:100",
            "normal:-1",
            "zipf:1.2:1.5",
            "gauss:3",
            "zoned:60/10:30/20",
            "zoned:60/60:40/60",
            "zoned:50/10:60/10",
            "zoned:1/2/3",
        ] {
            assert!(parse(bad, bytes).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_zone_with_a_slash_and_no_size_shares_what_is_left() {
        // fio's examples/rand-zones.fio writes the last zone as `20/`.
        let Ok(RandomDistribution::Zoned { zones, .. }) = parse("zoned:50/5:30/15:20/", bytes)
        else {
            panic!("zoned parses");
        };
        let sizes: Vec<(u32, u64)> = zones[0].iter().map(|z| (z.access, z.size)).collect();
        assert_eq!(sizes, [(50, 5), (30, 15), (20, 80)]);
    }

    #[test]
    fn zones_are_filled_and_shared_by_direction() {
        let Ok(RandomDistribution::Zoned { absolute, zones }) = parse("zoned:60/10:30:10", bytes)
        else {
            panic!("zoned parses");
        };
        assert!(!absolute);
        let want = vec![
            ZoneShare {
                access: 60,
                size: 10,
            },
            ZoneShare {
                access: 30,
                size: 45,
            },
            ZoneShare {
                access: 10,
                size: 45,
            },
        ];
        assert_eq!(zones, [want.clone(), want.clone(), want]);
        let Ok(RandomDistribution::Zoned { zones, .. }) =
            parse("zoned_abs:50/1m:50/2m,100/4k", bytes)
        else {
            panic!("zoned_abs parses");
        };
        assert_eq!(
            zones[0],
            [
                ZoneShare {
                    access: 50,
                    size: 1 << 20
                },
                ZoneShare {
                    access: 50,
                    size: 2 << 20
                }
            ]
        );
        let write = vec![ZoneShare {
            access: 100,
            size: 4096,
        }];
        assert_eq!(zones[1], write);
        assert_eq!(zones[2], write);
    }
}
