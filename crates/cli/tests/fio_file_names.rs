//! The files a job makes without `filename=`, named as fio 3.33 names them on the same job:
//! by default `jobname.jobnum.filenum`, else by `filename_format=` with its keywords
//! replaced, in the directory the run is given. Skips, saying so, where fio is not installed.

#[allow(dead_code)]
mod common;

use std::path::Path;
use std::process::Command;

/// The sorted names of the files in `dir`.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("directory")
        .map(|entry| {
            entry
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    names
}

/// The files fio and ioslice leave in a directory of their own for `options`.
fn files_of(options: &str) -> (Vec<String>, Vec<String>) {
    let root = tempfile::tempdir().expect("temp dir");
    let job = root.path().join("job.fio");
    std::fs::write(
        &job,
        format!("[global]\nsize=256k\nrw=read\n{options}\n[j]\n"),
    )
    .expect("job");
    let (by_fio, by_ioslice) = (root.path().join("fio"), root.path().join("ioslice"));
    std::fs::create_dir(&by_fio).expect("dir");
    std::fs::create_dir(&by_ioslice).expect("dir");
    let fio = Command::new("fio")
        .arg(format!("--directory={}", by_fio.display()))
        .arg(&job)
        .output()
        .expect("fio runs");
    assert!(
        fio.status.success(),
        "{}",
        String::from_utf8_lossy(&fio.stderr)
    );
    let ours = Command::new(env!("CARGO_BIN_EXE_ioslice"))
        .arg("run")
        .arg(&job)
        .arg("--device")
        .arg(&by_ioslice)
        .output()
        .expect("ioslice runs");
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stderr)
    );
    let stderr = String::from_utf8_lossy(&ours.stderr);
    assert!(!stderr.contains("filename_format"), "{stderr}");
    (listing(&by_fio), listing(&by_ioslice))
}

#[test]
fn files_are_named_as_fio_names_them() {
    if !common::have_fio() {
        return;
    }
    for options in [
        "nrfiles=2\nnumjobs=2",
        "nrfiles=2\nnumjobs=2\nfilename_format=data.$jobnum.$filenum",
        "nrfiles=3\nfilename_format=$JOBNAME-$filenum.$clientuid.bin",
    ] {
        let (fio, ours) = files_of(options);
        assert!(!fio.is_empty(), "{options}: fio made no file");
        assert_eq!(ours, fio, "{options}");
    }
}
