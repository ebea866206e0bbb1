//! Running a sweep's points on a cluster: `--cluster slurm` writes `DIR/sweep.sbatch`, a
//! Slurm job array with one task per point not yet stored, each task running this same
//! command with `--task INDEX` (the point's index in grid order), which runs that point alone
//! and stores its point file; `sweep --merge DIR` merges them once the array is done.

use std::ffi::OsString;
use std::path::Path;

/// The clusters `--cluster` knows.
pub fn check(name: &str) -> Result<(), String> {
    match name {
        "slurm" => Ok(()),
        _ => Err(format!(
            "--cluster: unknown cluster `{name}`: expected slurm"
        )),
    }
}

/// `text` quoted for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// This process's command line without `--cluster NAME`, each word quoted.
fn command_line(args: &[OsString]) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut skip = false;
    for arg in args {
        let text = arg
            .to_str()
            .ok_or_else(|| format!("--cluster: argument {arg:?} is not UTF-8"))?;
        if skip {
            skip = false;
            continue;
        }
        if text == "--cluster" {
            skip = true;
            continue;
        }
        if text.starts_with("--cluster=") {
            continue;
        }
        words.push(quote(text));
    }
    Ok(words)
}

/// The job array's script: a task per index of `pending`, run from the current directory.
pub fn slurm_script(dir: &Path, pending: &[usize]) -> Result<String, String> {
    let exe =
        std::env::current_exe().map_err(|e| format!("--cluster: cannot find this program: {e}"))?;
    let cwd = std::env::current_dir()
        .map_err(|e| format!("--cluster: cannot read the current directory: {e}"))?;
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let mut words = vec![quote(&exe.display().to_string())];
    words.extend(command_line(&args)?);
    let indices: Vec<String> = pending.iter().map(usize::to_string).collect();
    let logs = dir.join("slurm");
    std::fs::create_dir_all(&logs)
        .map_err(|e| format!("--cluster: cannot create {}: {e}", logs.display()))?;
    Ok(format!(
        "#!/bin/sh\n#SBATCH --job-name=ioslice-sweep\n#SBATCH --array={}\n#SBATCH --ntasks=1\n#SBATCH --chdir={}\n#SBATCH --output={}/%A_%a.out\nexec {} --task \"$SLURM_ARRAY_TASK_ID\"\n",
        indices.join(","),
        cwd.display(),
        logs.display(),
        words.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_task_command_is_this_one_without_the_cluster() {
        let args: Vec<OsString> = ["sweep", "a b.fio", "--cluster", "slurm", "--axis", "x='1'"]
            .iter()
            .map(OsString::from)
            .collect();
        assert_eq!(
            command_line(&args).unwrap().join(" "),
            r#"'sweep' 'a b.fio' '--axis' 'x='\''1'\'''"#
        );
        assert!(check("pbs").unwrap_err().contains("`pbs`"));
    }
}
