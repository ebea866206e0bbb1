//! `ioslice emulate`: serve a simulated device in real time as a file, until SIGINT or
//! SIGTERM.

use std::path::PathBuf;

use clap::Args;
use ioslice_emulate::fault::FaultPlan;
use ioslice_emulate::{EmulateError, Emulator, EmulatorConfig, Transport};
use ioslice_sim::preset::DeviceSpec;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

use crate::shared::{Printed, DEFAULT_DEVICE};

/// `ioslice emulate`.
#[derive(Debug, Args)]
pub struct EmulateArgs {
    /// An existing directory to mount at; the emulated disk is the file `disk` in it.
    pub mountpoint: PathBuf,
    /// Simulated device: `sim:PRESET[:key=value,...]` (see `ioslice devices`).
    #[arg(long, value_name = "DEVICE", default_value = DEFAULT_DEVICE)]
    pub device: String,
    /// Keep the disk's bytes in this regular file (created sparse if missing) instead of a
    /// temporary file removed when the emulator stops.
    #[arg(long, value_name = "FILE")]
    pub store: Option<PathBuf>,
    /// Most asynchronous requests FUSE lets reach the emulator at once (the rest wait in
    /// FUSE's queue, first come first served).
    #[arg(long = "max-background", value_name = "N", default_value_t = EmulatorConfig::DEFAULT_MAX_BACKGROUND)]
    pub max_background: u16,
    /// The emulator's own round trip, taken out of what the model sees: `off`, or
    /// `FIXED_US+PER_MIB_US` (as `45+150`, measured with `--device sim:null` and fio at
    /// queue depth 1 through the loop device).
    #[arg(long, value_name = "off|US+US", default_value = "off")]
    pub transport: String,
    /// Write one line per command to FILE as it completes (arrival, hand-over and completion
    /// times in µs, direction, sector, sectors, commands the model held).
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Faults to inject, `;`-separated: `eio`, `torn`, `slow:add=DURATION` with selectors
    /// (`dir=read|write|any`, `sectors=A..B`, `commands=A..B`, `from=TIME`, `for=DURATION`,
    /// `every=N`, `p=PROBABILITY`; `torn` takes `keep=SECTORS`), and
    /// `stall:at=TIME|command=N,for=DURATION`. Example: `eio:sectors=0..8,dir=write;
    /// stall:at=10s,for=40s`.
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Seed of the fault plan's random draws (`p=`): the same seed, the same faults.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

/// `FIXED_US+PER_MIB_US`.
fn parse_transport(text: &str) -> Result<Transport, String> {
    let expected = || {
        format!(
            "--transport: bad value '{text}': expected off or FIXED_US+PER_MIB_US such as 45+150"
        )
    };
    let (fixed, per_mib) = text.split_once('+').ok_or_else(expected)?;
    let micros = |part: &str| {
        part.trim()
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    match (micros(fixed), micros(per_mib)) {
        (Some(fixed), Some(per_mib)) => Ok(Transport {
            fixed: std::time::Duration::from_nanos((fixed * 1e3) as u64),
            per_mib: std::time::Duration::from_nanos((per_mib * 1e3) as u64),
        }),
        _ => Err(expected()),
    }
}

/// Mount, serve until SIGINT or SIGTERM, unmount, and print what was served.
pub fn emulate(args: &EmulateArgs) -> Result<Printed, String> {
    let device: DeviceSpec = args.device.parse().map_err(|e| format!("--device: {e}"))?;
    if args.max_background == 0 {
        return Err("--max-background: expected at least 1".into());
    }
    let transport = match args.transport.as_str() {
        "off" => Transport::NONE,
        fixed => parse_transport(fixed)?,
    };
    let faults = match &args.faults {
        Some(text) => Some(
            text.parse::<FaultPlan>()
                .map_err(|e| format!("--faults: {e}"))?,
        ),
        None => None,
    };
    let config = EmulatorConfig {
        device,
        store: args.store.clone(),
        max_background: args.max_background,
        transport,
        log: args.log.clone(),
        faults,
        seed: args.seed,
    };
    // Signals are taken before mounting, so that none arriving meanwhile is lost.
    let mut signals =
        Signals::new([SIGINT, SIGTERM]).map_err(|e| format!("cannot catch signals: {e}"))?;
    let mut emulator = Emulator::mount(&args.mountpoint, &config).map_err(|e| e.to_string())?;
    let info = emulator.info().clone();
    let path = emulator.disk_path();
    eprintln!(
        "ioslice: emulating {} ({:.1} GiB, queue depth {}, {}) as {}",
        info.name,
        (info.capacity_sectors * 512) as f64 / f64::from(1u32 << 30),
        info.queue_depth,
        if info.rotational {
            "rotational"
        } else {
            "non-rotational"
        },
        path.display()
    );
    if emulator.transport() != Transport::NONE {
        eprintln!(
            "ioslice: taken out of the model's view as the emulator's own round trip: {}",
            emulator.transport()
        );
    }
    if let Some(plan) = &args.faults {
        eprintln!("ioslice: injecting faults (seed {}): {plan}", args.seed);
    }
    eprintln!(
        "ioslice: as a block device: losetup --direct-io=on --find --show {}; stop with Ctrl-C once it is detached",
        path.display()
    );
    for _ in signals.forever() {
        match emulator.unmount() {
            Ok(summary) => return Ok(format!("{}: {summary}\n", info.name).into()),
            Err(EmulateError::Busy { .. }) => {
                eprintln!(
                    "ioslice: {} is still in use: detach the loop device over it (losetup -d), then stop again",
                    path.display()
                );
            }
            Err(error) => return Err(error.to_string()),
        }
    }
    Err("the signal handler stopped unexpectedly".into())
}
