//! The tree speaks only of the project as it is: no file says how the work on it was
//! organised, by numbered periods of work or by numbered tickets. History lives in git. This
//! walks the sources, documents, benches and scenarios of the repository and names every line
//! that does.

use std::fs;
use std::path::{Path, PathBuf};

/// Words that, before the word for a period of work, make it one (rather than a FUSE or TLS
/// connection of the same name).
const SESSION_ORDINALS: &[&str] = &[
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "this", "that", "last", "next", "previous", "earlier", "same", "one", "each", "every",
];

/// File kinds that are read.
const EXTENSIONS: &[&str] = &["rs", "md", "sh", "py", "fio", "toml", "txt"];

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            files(&path, out);
        } else if path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            out.push(path);
        }
    }
}

/// The words of a line, lower case, without punctuation.
fn words(line: &str) -> Vec<String> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '#'))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Why a line speaks of the work rather than the project, if it does. Another project's
/// ticket, cited after its repository's `owner/name`, is a source, not history.
fn history(line: &str) -> Option<&'static str> {
    let words = words(line);
    for pair in words.windows(2) {
        let (a, b) = (pair[0].as_str(), pair[1].as_str());
        if (b == "session" || b == "sessions") && SESSION_ORDINALS.contains(&a) {
            return Some("a work session");
        }
    }
    let tokens: Vec<&str> = line.split_whitespace().collect();
    for (i, pair) in tokens.windows(2).enumerate() {
        let word = pair[0].trim_matches(|c: char| !c.is_alphanumeric());
        let number = pair[1].trim_matches(|c: char| !c.is_ascii_digit());
        let numbered = !number.is_empty()
            && pair[1]
                .trim_start_matches(['#', '('])
                .starts_with(|c: char| c.is_ascii_digit());
        let cited = i > 0 && tokens[i - 1].contains('/');
        if word.eq_ignore_ascii_case("issue") && numbered && !cited {
            return Some("an issue number");
        }
    }
    None
}

#[test]
fn no_file_speaks_of_sessions_or_issue_numbers() {
    let root = repository();
    let mut paths = Vec::new();
    for dir in [
        "crates",
        "docs",
        "bench",
        "scenarios",
        "README.md",
        "Cargo.toml",
    ] {
        let path = root.join(dir);
        if path.is_file() {
            paths.push(path);
        } else {
            files(&path, &mut paths);
        }
    }
    assert!(
        paths.len() > 50,
        "the walk found only {} files",
        paths.len()
    );
    let this_file = Path::new(file!()).file_name();
    let mut found = Vec::new();
    for path in &paths {
        if path.file_name() == this_file {
            continue;
        }
        let Ok(text) = fs::read_to_string(path) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            if let Some(why) = history(line) {
                let shown = path.strip_prefix(&root).unwrap_or(path).display();
                found.push(format!("{shown}:{}: {why}: {}", number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "\n{}", found.join("\n"));
}

#[test]
fn the_check_recognises_what_it_looks_for() {
    assert!(history("measured in the fourth session, below").is_some());
    assert!(history("Issue 5 quotes these figures").is_some());
    assert!(history("see issue #12").is_some());
    assert!(history("the FUSE session thread sends the reply").is_none());
    assert!(history("fuser::Session::new(filesystem)").is_none());
    assert!(history("a known issue with loop devices").is_none());
    assert!(history("bfq 0.736 s (Algodev-github/S issue #2).").is_none());
    assert!(history("the targets (issue 5):").is_some());
}
