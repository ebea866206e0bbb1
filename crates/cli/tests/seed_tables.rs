//! `ioslice seeds`: the posts' figures beside ioslice's. docs/experiments.md carries the
//! table it prints for every scenario, and must agree with the models as they are; and the
//! command's own shape (a table per file, the verdicts, the count, one-line errors).

mod common;

use common::{assert_user_error, ioslice, stderr, stdout};

const BEGIN: &str = "<!-- seed-tables: begin -->\n";
const END: &str = "<!-- seed-tables: end -->";

/// Every scenario file with figures of a post, in the order the shell's glob gives them.
fn seed_scenarios() -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in std::fs::read_dir(root.join("scenarios")).expect("scenarios/") {
        let dir = dir.expect("entry").path();
        let is_seed = dir
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("seed-"));
        if !is_seed {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("a seed directory") {
            let file = file.expect("entry").path();
            if file.extension().is_some_and(|e| e == "fio") {
                let relative = file.strip_prefix(&root).expect("under the root");
                files.push(relative.display().to_string());
            }
        }
    }
    files.sort();
    files
}

#[test]
fn the_documented_tables_are_what_the_models_give() {
    let files = seed_scenarios();
    let mut args = vec!["seeds", "--output-format", "markdown"];
    args.extend(files.iter().map(String::as_str));
    let output = ioslice(&args);
    assert!(output.status.success(), "{}", stderr(&output));
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/experiments.md"),
    )
    .expect("docs/experiments.md");
    let section = doc
        .split_once(BEGIN)
        .and_then(|(_, rest)| rest.split_once(END))
        .map(|(section, _)| section)
        .expect("docs/experiments.md has the seed-tables section");
    assert!(
        section == stdout(&output),
        "docs/experiments.md's seed tables differ from what the models give: run bench/seed-tables.sh --write and explain the change"
    );
}

#[test]
fn a_file_gets_a_row_per_figure_and_a_count() {
    let output = ioslice(&["seeds", "scenarios/seed-003/reader-vs-writer-64k.fio"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(
        text.starts_with("scenarios/seed-003/reader-vs-writer-64k.fio\n"),
        "{text}"
    );
    for scheduler in ["deadline", "as", "cfq"] {
        for job in ["reader", "writer"] {
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(scheduler)
                    && l.split_whitespace().nth(2) == Some(job)),
                "{scheduler} {job}: {text}"
            );
        }
    }
    assert!(text.contains(" of 6 hold"), "{text}");
    assert!(text.contains("scenarios/seed-003"), "{text}");
}

#[test]
fn bad_input_is_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let plain = dir.path().join("plain.fio");
    std::fs::write(&plain, "[a]\nrw=read\nsize=1m\n").expect("write");
    assert_user_error(
        &ioslice(&["seeds", plain.to_str().expect("path")]),
        &["no ioslice-seed: line"],
    );
    let unknown = dir.path().join("unknown.fio");
    std::fs::write(
        &unknown,
        "; ioslice-seed: noop nobody=1\n[a]\nrw=read\nsize=1m\nruntime=1\n",
    )
    .expect("write");
    assert_user_error(
        &ioslice(&["seeds", unknown.to_str().expect("path")]),
        &["unknown.fio", "'nobody'"],
    );
    assert_user_error(
        &ioslice(&[
            "seeds",
            "--output-format",
            "html",
            "scenarios/seed-003/reader-vs-writer-64k.fio",
        ]),
        &["--output-format 'html'"],
    );
}
