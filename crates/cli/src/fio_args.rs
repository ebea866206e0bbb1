//! fio's command line in `ioslice run`: jobs and options given as `--option=value`, as fio
//! 3.33 reads them (`parse_cmd_line` in fio's `init.c`). `--name=NAME` starts a job and the
//! options after it belong to that job; options before the first `--name` (or after
//! `--name=global`) are global: the defaults of the jobs on the command line and of the
//! first job file's, whose own `[global]`s and jobs override them. `--section` leaves out
//! the jobs it does not name that come after it, as fio's getopt loop does. A value may follow
//! as the next argument (`--rw read`) except for options that may stand alone
//! (`--time_based`), as getopt reads fio's.
//!
//! ioslice's own flags (`--device`, `--sched`, `--cgroup`, `--output-format`, ...) keep their
//! meaning and are left to clap: where a fio option has the same name (fio's `cgroup=`),
//! ioslice's flag wins; a job file still takes `cgroup=`. Any other `--name[=value]` is a
//! job option; a name fio does not know is refused with the job-file parser's "did you
//! mean".

use std::ffi::OsString;

use clap::CommandFactory;
use ioslice_fio::jobfile::fio_table;
use ioslice_fio::jobfile::ini::{Entry, Section};
use ioslice_fio::Origin;

/// What the job options of the command line come to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CommandLineJobs {
    /// Options outside any job: fio's globals.
    pub globals: Vec<Entry>,
    /// The jobs `--name` started, in order, each with its options (`name` among them).
    pub jobs: Vec<Section>,
}

/// Where the command line's options say they come from in messages: `command line:N`, N
/// the argument's position after `run`.
pub const ORIGIN: &str = "command line";

/// Splits `ioslice run`'s arguments: those clap reads (ioslice's flags, fio's `--output`,
/// `--section` and the others `run` declares, the job files) come back for clap, the job
/// options as [`CommandLineJobs`]. Other subcommands' arguments come back whole.
pub fn split(args: Vec<OsString>) -> Result<(Vec<OsString>, CommandLineJobs), String> {
    let mut jobs = CommandLineJobs::default();
    if args.get(1).and_then(|a| a.to_str()) != Some("run") {
        return Ok((args, jobs));
    }
    let flags = run_flags();
    let mut kept: Vec<OsString> = args[..2].to_vec();
    let mut rest = args.into_iter().skip(2).enumerate().peekable();
    let mut only: Vec<String> = Vec::new();
    let mut skipping = false;
    while let Some((index, arg)) = rest.next() {
        let Some(text) = arg.to_str().and_then(|t| t.strip_prefix("--")) else {
            kept.push(arg);
            continue;
        };
        if text.is_empty() {
            kept.push(arg);
            kept.extend(rest.map(|(_, a)| a));
            break;
        }
        let (name, value) = match text.split_once('=') {
            Some((name, value)) => (name.to_string(), Some(value.to_string())),
            None => (text.to_string(), None),
        };
        if let Some(&takes_value) = flags.get(name.as_str()) {
            if name == "section" {
                only.extend(value.clone().or_else(|| peek_text(&mut rest)));
            }
            kept.push(arg);
            if takes_value && value.is_none() {
                kept.extend(rest.next().map(|(_, a)| a));
            }
            continue;
        }
        let option =
            fio_table::lookup(&name).ok_or_else(|| bad_option(index + 1, &name, &value))?;
        let value = match value {
            Some(value) => Some(value),
            None if option.kind == "str_set" => None,
            None => Some(next_value(&mut rest, &name)?),
        };
        let entry = Entry {
            key: name.clone(),
            value,
            origin: Origin {
                file: ORIGIN.to_string(),
                line: index + 1,
            },
        };
        if option.name == "name" {
            let job = entry.value.clone().unwrap_or_default();
            // fio: a skipped job's options fall to the globals, until the next `--name`.
            skipping = !only.is_empty() && !job.starts_with("global") && !only.contains(&job);
            if job.starts_with("global") || skipping {
                if !skipping {
                    jobs.globals.push(entry);
                }
                continue;
            }
            jobs.jobs.push(Section {
                name: job,
                origin: entry.origin.clone(),
                entries: vec![entry],
            });
            continue;
        }
        match jobs.jobs.last_mut() {
            Some(section) if !skipping => section.entries.push(entry),
            _ => jobs.globals.push(entry),
        }
    }
    Ok((kept, jobs))
}

type Args =
    std::iter::Peekable<std::iter::Enumerate<std::iter::Skip<std::vec::IntoIter<OsString>>>>;

fn peek_text(rest: &mut Args) -> Option<String> {
    rest.peek()
        .and_then(|(_, a)| a.to_str())
        .map(str::to_string)
}

/// The value of `--name value`: the next argument, as getopt takes it.
fn next_value(rest: &mut Args, name: &str) -> Result<String, String> {
    match rest.next() {
        Some((_, arg)) => arg
            .into_string()
            .map_err(|_| format!("--{name}: the value is not UTF-8 text: expected text")),
        None => Err(format!(
            "option '--{name}' requires an argument: expected --{name}=VALUE"
        )),
    }
}

/// fio's refusal of an option it does not know, with its suggestion.
fn bad_option(position: usize, name: &str, value: &Option<String>) -> String {
    let written = match value {
        Some(value) => format!("{name}={value}"),
        None => name.to_string(),
    };
    let suggestion = fio_table::suggestion(name)
        .map(|s| format!("; did you mean {s}?"))
        .unwrap_or_default();
    format!("{ORIGIN}:{position}: bad option <--{written}>: expected an option fio knows or one of ioslice's (see ioslice run --help){suggestion}")
}

/// `run`'s long flags, and whether each takes a value.
fn run_flags() -> std::collections::HashMap<String, bool> {
    let command = crate::Cli::command();
    let mut flags = std::collections::HashMap::new();
    flags.insert("help".to_string(), false);
    if let Some(run) = command.find_subcommand("run") {
        for arg in run.get_arguments() {
            let takes = arg.get_action().takes_values();
            for long in arg.get_long_and_visible_aliases().into_iter().flatten() {
                flags.insert(long.to_string(), takes);
            }
        }
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split_run(args: &[&str]) -> Result<(Vec<String>, CommandLineJobs), String> {
        let mut all = vec![OsString::from("ioslice"), OsString::from("run")];
        all.extend(args.iter().map(OsString::from));
        let (kept, jobs) = split(all)?;
        let kept = kept
            .into_iter()
            .skip(2)
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        Ok((kept, jobs))
    }

    fn written(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match &e.value {
                Some(v) => format!("{}={v}", e.key),
                None => e.key.clone(),
            })
            .collect()
    }

    #[test]
    fn options_belong_to_the_last_name_and_the_rest_are_global() {
        let (kept, jobs) = split_run(&[
            "--bs=8k",
            "--name=a",
            "--rw",
            "randread",
            "j.fio",
            "--device",
            "sim:ssd",
            "--name=b",
            "--time_based",
            "--cgroup",
            "g:weight=2",
        ])
        .expect("split");
        assert_eq!(
            kept,
            ["j.fio", "--device", "sim:ssd", "--cgroup", "g:weight=2"]
        );
        assert_eq!(written(&jobs.globals), ["bs=8k"]);
        assert_eq!(jobs.jobs.len(), 2);
        assert_eq!(written(&jobs.jobs[0].entries), ["name=a", "rw=randread"]);
        assert_eq!(written(&jobs.jobs[1].entries), ["name=b", "time_based"]);
        assert_eq!(jobs.jobs[1].entries[1].origin.line, 9);
    }

    #[test]
    fn unknown_names_get_fios_suggestion() {
        let error = split_run(&["--iodpeth=4"]).unwrap_err();
        assert!(error.contains("bad option <--iodpeth=4>"), "{error}");
        assert!(error.ends_with("did you mean iodepth?"), "{error}");
        assert!(split_run(&["--rw"])
            .unwrap_err()
            .contains("requires an argument"));
    }

    #[test]
    fn a_skipped_jobs_options_fall_to_the_globals() {
        let (kept, jobs) = split_run(&[
            "--section=b",
            "--name=a",
            "--bs=4k",
            "--name=b",
            "--size=1m",
        ])
        .expect("split");
        assert_eq!(kept, ["--section=b"]);
        assert_eq!(written(&jobs.globals), ["bs=4k"]);
        assert_eq!(written(&jobs.jobs[0].entries), ["name=b", "size=1m"]);
    }
}
