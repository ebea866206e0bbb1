//! `ioslice`: run fio job files through Linux-style I/O schedulers on simulated devices.
#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cgroup_arg;
mod compare;
mod controller_arg;
mod emulate;
mod fio_args;
mod fio_cmdline;
mod group_change;
mod listings;
mod report;
mod run;
mod scenario;
mod seed_figure;
mod seeds;
mod shared;
mod signals;
mod status;
mod sweep;
mod timed;
mod trace;

/// Exit status for every user error (bad job file, scheduler, tunable, device), as fio's usage errors.
const EXIT_USAGE: u8 = 2;

#[derive(Debug, Parser)]
#[command(
    name = "ioslice",
    version,
    about = "A userspace I/O scheduler and I/O controller: the Linux elevators on simulated and real devices"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run fio job files, or jobs given as fio's command line (`--name=x --rw=randread
    /// --size=16m`), and report in fio's formats.
    Run(run::RunArgs),
    /// Run the same job file under several schedulers (and client counts) and compare.
    Compare(compare::CompareArgs),
    /// Serve a simulated device in real time as a file through FUSE (a block device with
    /// `losetup --direct-io=on`), until SIGINT or SIGTERM.
    Emulate(emulate::EmulateArgs),
    /// Run a grid of settings (scheduler, tunables, device, host, job options) × seeds,
    /// storing each point as it finishes, and merge the points into one JSON and one page.
    Sweep(sweep::SweepArgs),
    /// Put runs and comparisons written by `--report FILE.json` (or fio-format JSON, fio's
    /// own included) on one self-contained HTML page.
    Report(report::ReportCommandArgs),
    /// Run every `; ioslice-seed:` line of the given scenario files and set the original
    /// experiments' figures beside ioslice's, with the ratio and a verdict.
    Seeds(seeds::SeedsArgs),
    /// List the simulated device presets with every parameter and where its value comes from.
    Devices,
    /// List the schedulers with their tunables, defaults and units.
    Schedulers,
}

fn main() -> ExitCode {
    let (args, jobs) = match fio_args::split(std::env::args_os().collect()) {
        Ok(split) => split,
        Err(message) => {
            eprintln!("ioslice: error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Run(args) => run::run(&args, &jobs),
        Command::Compare(args) => compare::compare(&args),
        Command::Sweep(args) => sweep::sweep(&args),
        Command::Emulate(args) => emulate::emulate(&args),
        Command::Report(args) => report::report_command(&args).map(shared::Printed::from),
        Command::Seeds(args) => seeds::seeds(&args),
        Command::Devices => Ok(listings::devices().into()),
        Command::Schedulers => Ok(listings::schedulers().into()),
    };
    match result {
        Ok(printed) => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`ioslice devices | head`) is not an error worth a message.
            let _ = stdout.write_all(printed.text.as_bytes());
            ExitCode::from(printed.status)
        }
        Err(message) => {
            eprintln!("ioslice: error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}
