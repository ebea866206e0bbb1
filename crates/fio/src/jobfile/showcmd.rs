//! `--showcmd`: a job file written as fio's command line, as fio 3.33 prints it
//! (`__parse_jobs_ini` and `dump_opt_list` in fio's `init.c`). fio prints, per job file, `fio `
//! then, for each section `--section` keeps, a `[global]` as every global option set so far
//! (the command line's, then each earlier and this `[global]`'s, repeated at each later
//! `[global]`), and a job as `--name=NAME` and its own options; within a section options come
//! in fio's parsing order (higher `prio` first, `kb_base` before sizes, `filename` last), under
//! fio's name for them (`blocksize=` prints as `--bs=`), a `description` quoted, a bare option
//! followed by a space alone. Jobs given on the command line are not printed, as in fio.

use super::fio_table;
use super::ini::{Entry, Section};

/// fio's `--showcmd` line for one job file's `sections`, beneath the command line's
/// `globals`, keeping the sections `only` names (all when empty); empty when no section is
/// kept, as fio prints nothing for such a file.
pub fn command_line(sections: &[Section], globals: &[Entry], only: &[String]) -> String {
    let mut global_list: Vec<&Entry> = globals.iter().collect();
    let mut line = String::new();
    for section in sections.iter().filter(|s| super::runs(s, only)) {
        if line.is_empty() {
            line.push_str("fio ");
        }
        let mut own: Vec<&Entry> = section.entries.iter().collect();
        // A stable sort, as glibc's qsort is for fio's short lists: higher prio first.
        own.sort_by_key(|entry| std::cmp::Reverse(fio_table::prio(&entry.key)));
        if section.is_global() {
            global_list.extend(own);
            global_list.iter().for_each(|entry| print(&mut line, entry));
        } else {
            line.push_str(&format!("--name={} ", section.name));
            own.iter().for_each(|entry| print(&mut line, entry));
        }
    }
    if !line.is_empty() {
        line.push('\n');
    }
    line
}

/// One option as fio's `dump_print_option` writes it.
fn print(line: &mut String, entry: &Entry) {
    let name = fio_table::fio_name(&entry.key);
    match &entry.value {
        Some(value) if name == "description" => line.push_str(&format!("--{name}=\"{value}\" ")),
        Some(value) => line.push_str(&format!("--{name}={value} ")),
        None => line.push_str(&format!("--{name} ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobfile::{ini, ParseOptions};

    fn show(text: &str, globals: &[Entry], only: &[&str]) -> String {
        let sections =
            ini::read_sections(text, "j.fio", &ParseOptions::default()).expect("job file");
        let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
        command_line(&sections, globals, &only)
    }

    /// fio 3.33's own output for these files (`fio --showcmd`).
    #[test]
    fn prints_as_fio_does() {
        let text =
            "[global]\nbs=8k\n[a]\nrw=randread\nsize=16m\nruntime=10\n[b]\nrw=write\nsize=1m\n";
        assert_eq!(
            show(text, &[], &[]),
            "fio --bs=8k --name=a --rw=randread --size=16m --runtime=10 --name=b --rw=write --size=1m \n"
        );
        assert_eq!(
            show(text, &[], &["b"]),
            "fio --bs=8k --name=b --rw=write --size=1m \n"
        );
        let twice = "[global]\nbs=4k\n[a]\nreadwrite=read\n[global]\nbs=8k\n[b]\nrw=write\nkb_base=1000\ndescription=x y\ntime_based\n";
        assert_eq!(
            show(twice, &[], &[]),
            "fio --bs=4k --name=a --rw=read --bs=4k --bs=8k --name=b --kb_base=1000 --rw=write --description=\"x y\" --time_based \n"
        );
    }
}
