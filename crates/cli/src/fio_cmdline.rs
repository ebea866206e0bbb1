//! The jobs `ioslice run` runs, gathered as fio gathers them: the jobs given on the command
//! line ([`crate::fio_args`]) first, then each job file's, every one beneath the command
//! line's global options; `--section` keeps only the named jobs. Also `--showcmd`, each job
//! file printed as fio's command line.

use std::path::{Path, PathBuf};

use ioslice_fio::jobfile::source::{read_job_text, JOB_TEXT_LIMIT};
use ioslice_fio::jobfile::{
    check_simulable, check_supported, ini, parse_file, parse_sections, showcmd, JobFileError,
    ParseOptions,
};
use ioslice_fio::JobFile;

use crate::fio_args::{CommandLineJobs, ORIGIN};

/// What `run` was given to find its jobs in.
#[derive(Debug, Clone, Copy)]
pub struct JobSources<'a> {
    /// The job files, in order.
    pub job_files: &'a [PathBuf],
    /// `--section` names.
    pub section: &'a [String],
    /// `--strict`.
    pub strict: bool,
    /// The jobs and globals of the command line.
    pub jobs: &'a CommandLineJobs,
}

/// How `run` parses: strictness, the environment, the command line's globals and
/// `--section`s.
fn parse_options(args: &JobSources, jobs: &CommandLineJobs) -> ParseOptions {
    ParseOptions {
        strict: args.strict,
        env: std::env::vars().collect(),
        globals: jobs.globals.clone(),
        sections: args.section.to_vec(),
        ..ParseOptions::default()
    }
}

/// The command line's jobs, then each job file's (a later file's first job a stonewall, as
/// [`JobFile::concatenate`] makes it), with their warnings, not yet printed. As in fio, which starts
/// its defaults afresh before each later file, the command line's globals apply to its own
/// jobs and the first job file's, not to later files'. fio's JSON `global options` are the
/// command line's, then the first file's `[global]`s, and none when several files run.
pub fn load_run_jobs(args: &JobSources) -> Result<JobFile, String> {
    let jobs = args.jobs;
    let files = args
        .job_files
        .iter()
        .enumerate()
        .map(|(index, path)| load(path, &file_options(args, index)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut whole = JobFile::concatenate(files);
    if !jobs.jobs.is_empty() {
        let options = command_line_options(args);
        let command_line =
            parse_sections(&jobs.jobs, ORIGIN, &options).map_err(|e| e.to_string())?;
        if args.job_files.is_empty() {
            return Ok(command_line);
        }
        whole.jobs.splice(0..0, command_line.jobs);
        whole.warnings.splice(0..0, command_line.warnings);
    }
    Ok(whole)
}

/// How the command line's jobs are parsed: `--section` already left out, as fio does, the
/// jobs named before it, in [`crate::fio_args::split`].
fn command_line_options(args: &JobSources) -> ParseOptions {
    let mut options = parse_options(args, args.jobs);
    options.sections.clear();
    options
}

/// How the job file at `index` is parsed: the first beneath the command line's globals, a
/// later one from fio's defaults.
fn file_options(args: &JobSources, index: usize) -> ParseOptions {
    let mut options = parse_options(args, args.jobs);
    if index > 0 {
        options.globals.clear();
    }
    options
}

/// [`load_run_jobs`] for a run: a job ioslice cannot run (an engine for hardware it has no
/// model of) is refused in one line, without the warnings about the options that go with it;
/// otherwise the warnings are printed.
pub fn load_for_run(args: &JobSources) -> Result<JobFile, String> {
    load_checked(args, false)
}

/// [`load_for_run`] for a simulated run: the engines the simulator cannot run (a create,
/// a stat, a truncate) are refused too, in one line, before any warning.
pub fn load_for_simulation(args: &JobSources) -> Result<JobFile, String> {
    load_checked(args, true)
}

fn load_checked(args: &JobSources, simulated: bool) -> Result<JobFile, String> {
    let job_file = load_run_jobs(args)?;
    check_supported(&job_file).map_err(|e| e.to_string())?;
    if simulated {
        check_simulable(&job_file).map_err(|e| e.to_string())?;
    }
    print_warnings(&job_file);
    Ok(job_file)
}

fn load(path: &Path, options: &ParseOptions) -> Result<JobFile, String> {
    parse_file(path, options).map_err(|e| e.to_string())
}

/// Every warning of a job file on stderr, one line each.
pub fn print_warnings(job_file: &JobFile) {
    for warning in &job_file.warnings {
        eprintln!(
            "ioslice: warning: {}:{}: {}",
            warning.origin.file, warning.origin.line, warning.message
        );
    }
}

/// `--showcmd`: each job file as fio prints it ([`showcmd::command_line`]), once every job
/// parses (a file whose jobs `--section` all leaves out is printed too, as fio prints it);
/// the command line's own jobs are not printed, as fio does not print them.
pub fn show(args: &JobSources) -> Result<String, String> {
    let jobs = args.jobs;
    if !jobs.jobs.is_empty() {
        parse_sections(&jobs.jobs, ORIGIN, &command_line_options(args))
            .map_err(|e| e.to_string())?;
    }
    for (index, path) in args.job_files.iter().enumerate() {
        match parse_file(path, &file_options(args, index)) {
            Ok(_) | Err(JobFileError::NoJobs { .. }) => {}
            Err(error) => return Err(error.to_string()),
        }
    }
    let mut out = String::new();
    for (index, path) in args.job_files.iter().enumerate() {
        let options = file_options(args, index);
        let sections = read(path, &options)?;
        out.push_str(&showcmd::command_line(
            &sections,
            &options.globals,
            args.section,
        ));
    }
    Ok(out)
}

fn read(path: &Path, options: &ParseOptions) -> Result<Vec<ini::Section>, String> {
    let shown = path.display().to_string();
    let text = read_job_text(path, JOB_TEXT_LIMIT)
        .map_err(|reason| format!("{shown}: cannot read: {reason}"))?;
    ini::read_sections(&text, &shown, options).map_err(|e| e.to_string())
}
