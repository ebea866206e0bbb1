//! fio's `exec` engine: a job that moves no data and runs a program beside the others.
//!
//! fio 3.33 (`engines/exec.c`): the job's first I/O forks and executes `program` with
//! `arguments`, in which each `%r` becomes the job's runtime in whole seconds and each `%n`
//! the job's name; the command line is split on spaces (no quoting). With `std_redirect`
//! (the default) the program's standard output and error go to `JOBNAME.stdout` and
//! `JOBNAME.stderr`, created or truncated, in the working directory. Every later I/O sleeps
//! 50 ms (the engine's wait), then the job thinks 50 ms (the think time the engine sets for
//! itself, after every I/O), so the job polls the clock every 100 ms; the first poll past
//! the runtime sends the program SIGTERM and sleeps `grace_time` seconds (default 1) inside
//! that I/O, and the job's end sends SIGKILL. fio does not watch the program exit: the job
//! lasts its runtime whatever the program does. Each I/O is counted as a read of no bytes.

/// The engine's own sleep in every I/O after the first, and the think time after each.
pub const POLL_US: u64 = 50_000;

/// A job's `exec` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExecProgram {
    /// `program=`: the program to execute (searched in `PATH`, as `execvp` does).
    pub program: Option<String>,
    /// `arguments=`: its arguments, with `%r` and `%n` expanded.
    pub arguments: Option<String>,
    /// `grace_time=`: seconds between SIGTERM and the end of the job.
    pub grace_time_s: u64,
    /// `std_redirect=`: the program's stdout and stderr to `JOBNAME.stdout`/`.stderr`.
    pub std_redirect: bool,
}

impl Default for ExecProgram {
    fn default() -> Self {
        Self {
            program: None,
            arguments: None,
            grace_time_s: 1,
            std_redirect: true,
        }
    }
}

impl ExecProgram {
    /// The command line fio executes for job `job` whose runtime is `runtime_us`: the
    /// program, then the arguments with `%r` (whole seconds) and `%n` expanded, split on
    /// spaces with empty words dropped.
    pub fn argv(&self, job: &str, runtime_us: u64) -> Vec<String> {
        let program = self.program.as_deref().unwrap_or_default();
        let arguments = self
            .arguments
            .as_deref()
            .map(|text| {
                text.replace("%r", &(runtime_us / 1_000_000).to_string())
                    .replace("%n", job)
            })
            .unwrap_or_default();
        program
            .split(' ')
            .chain(arguments.split(' '))
            .filter(|word| !word.is_empty())
            .map(str::to_string)
            .collect()
    }

    /// The files the program's output goes to, if redirected: `JOBNAME.stdout` and
    /// `JOBNAME.stderr`.
    pub fn output_files(&self, job: &str) -> Option<(String, String)> {
        self.std_redirect
            .then(|| (format!("{job}.stdout"), format!("{job}.stderr")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_and_name_are_expanded_and_words_split_on_spaces() {
        let exec = ExecProgram {
            program: Some("/bin/sleep".into()),
            arguments: Some("%r  %n-%r".into()),
            ..ExecProgram::default()
        };
        assert_eq!(exec.argv("nap", 10_500_000), ["/bin/sleep", "10", "nap-10"]);
        assert_eq!(
            exec.output_files("nap"),
            Some(("nap.stdout".into(), "nap.stderr".into()))
        );
        let bare = ExecProgram {
            program: Some("true".into()),
            std_redirect: false,
            ..ExecProgram::default()
        };
        assert_eq!(bare.argv("j", 0), ["true"]);
        assert_eq!(bare.output_files("j"), None);
    }
}
