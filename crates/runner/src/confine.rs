//! The files of a run on a `--device` directory stay in that directory: a job's file name
//! made absolute (`filename=/elsewhere/f`, or an absolute `directory=`) or climbing out with
//! `..` is refused before anything is created, naming the option and its value. fio itself
//! (3.33, `filesetup.c`, `add_file`) opens an absolute name wherever it points; ioslice's
//! `--device` is the one place a real run may write, so a name outside it is an error.
//!
//! The comparison is of paths made absolute and with `.` and `..` resolved by their text
//! (the `--device` directory through the filesystem, as it exists): a symbolic link inside
//! the directory that points out of it is followed as the kernel follows it.

use std::path::{Component, Path, PathBuf};

use ioslice_fio::JobSpec;

use crate::RunError;

/// The path of the file `name` (as the plan names it: `directory=` already before it) of
/// `spec` under the run's directory `dir`, or the one-line refusal if it leaves `dir`.
pub(crate) fn within(dir: &Path, spec: &JobSpec, name: &str) -> Result<PathBuf, RunError> {
    let root = std::fs::canonicalize(dir).unwrap_or_else(|_| lexical(dir));
    let path = dir.join(name);
    let resolved = lexical(&root.join(path.strip_prefix(dir).unwrap_or(&path)));
    if resolved.starts_with(&root) {
        return Ok(path);
    }
    let (option, value) = match spec.directory.as_deref() {
        Some(directory) if !lexical(&root.join(directory)).starts_with(&root) => {
            ("directory", directory)
        }
        _ => ("filename", name),
    };
    Err(RunError::Job(format!(
        "{}:{}: job {}: {option}={value} is outside --device {}: expected a path inside that directory (relative to it, or absolute under it)",
        spec.origin.file,
        spec.origin.line,
        spec.name,
        dir.display()
    )))
}

/// `path` made absolute (against the working directory) with `.` and `..` resolved by text.
fn lexical(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(directory: Option<&str>) -> JobSpec {
        JobSpec {
            name: "j".into(),
            directory: directory.map(str::to_string),
            ..JobSpec::default()
        }
    }

    #[test]
    fn names_inside_the_directory_are_kept() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let inside = dir.path().join("sub/f");
        let absolute = inside.display().to_string();
        let kept = within(dir.path(), &job(None), &absolute).expect("inside");
        assert_eq!(kept, inside);
        let relative = within(dir.path(), &job(None), "a/../b").expect("inside");
        assert_eq!(relative, dir.path().join("a/../b"));
    }

    #[test]
    fn an_absolute_directory_elsewhere_is_refused_by_its_option() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let error = within(dir.path(), &job(Some("/var/tmp")), "/var/tmp/j.0.0")
            .expect_err("outside")
            .to_string();
        assert!(
            error.contains("job j: directory=/var/tmp is outside --device "),
            "{error}"
        );
        let error = within(dir.path(), &job(None), "../x")
            .expect_err("outside")
            .to_string();
        assert!(error.contains("job j: filename=../x is outside"), "{error}");
    }
}
