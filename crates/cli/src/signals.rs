//! SIGINT and SIGTERM during `run` and `compare`, taken as fio takes them: the first asks
//! every job to stop (nothing more is issued, what is in flight completes) and the results
//! measured so far are printed, with the exit status 128 and a line naming the signal; a
//! second one ends the process at once, with 128 + the signal's number. `emulate` has its
//! own handling (it unmounts).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use ioslice_core::StopSignal;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// fio's exit status after a run ended by a signal.
pub const EXIT_INTERRUPTED: u8 = 128;

/// A stop request that SIGINT and SIGTERM set from now on.
pub fn stop_on_signals() -> Result<StopSignal, String> {
    let stop = StopSignal::new();
    let asked_once = Arc::new(AtomicBool::new(false));
    for signal in [SIGINT, SIGTERM] {
        let register = || -> std::io::Result<()> {
            // In this order: the second signal finds the flag the first one set.
            flag::register_conditional_shutdown(signal, 128 + signal, Arc::clone(&asked_once))?;
            flag::register(signal, Arc::clone(&asked_once))?;
            flag::register_usize(signal, stop.cell(), signal as usize)?;
            Ok(())
        };
        register().map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    Ok(stop)
}

/// After a run: the line to print and the exit status, if a signal ended it.
pub fn interrupted(stop: &StopSignal) -> Option<(String, u8)> {
    stop.signal().map(|signal| {
        (
            format!("ioslice: terminating on signal {signal}"),
            EXIT_INTERRUPTED,
        )
    })
}
