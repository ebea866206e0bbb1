#!/usr/bin/env python3
"""fio's option table as data, from fio's source tree.

    bench/lib/fio-option-table.py FIO_SOURCE_DIR [OUTPUT]

Writes crates/fio/src/jobfile/fio-options.tsv (or OUTPUT): one line per option fio defines,
with its alias and where it belongs (`general` for options.c and cgroup.c, `profile:NAME` for
profiles/NAME.c, or the engines whose option it is: engines/NAME.c and .h), read from the `.name = "..."` and
`.alias = "..."` fields of fio's option tables. ioslice reads the file to tell a misspelt
option (an error, with fio's suggestion, as fio refuses it) from a fio option it does not act
on (a warning). The first line names the source's commit when FIO_SOURCE_DIR is a git checkout.
FIO_SOURCE_DIR may be a checkout or a bare git directory (its HEAD is read). Run it again when
the fio it follows changes.
"""

import os
import re
import subprocess
import sys
import tempfile

NAME = re.compile(r'\.name\s*=\s*"([^"]+)"')
ALIAS = re.compile(r'\.alias\s*=\s*"([^"]+)"')


def options(path):
    """(name, alias) of every option in a C file's option tables; an engine's own
    `ioengine_ops` (the block holding FIO_IOOPS_VERSION) is not an option."""
    text = open(path, errors="replace").read()
    found = []
    starts = [m for m in NAME.finditer(text)]
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(text)
        block = text[m.end():end]
        if "FIO_IOOPS_VERSION" in block or "FIO_IOOPS_VERSION" in text[max(0, m.start() - 200):m.start()]:
            continue
        alias = ALIAS.search(block)
        found.append((m.group(1), alias.group(1) if alias else ""))
    return found


def describe(source):
    try:
        flag = ["--git-dir", source] if not os.path.exists(os.path.join(source, ".git")) else ["-C", source]
        out = subprocess.run(["git", *flag, "describe", "--tags", "--always"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return os.path.abspath(source)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: fio-option-table.py FIO_SOURCE_DIR [OUTPUT]")
    source = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    output = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "..", "..", "crates", "fio", "src", "jobfile", "fio-options.tsv")
    if not os.path.exists(os.path.join(source, "options.c")):
        # A bare git directory: read its HEAD's tree.
        unpacked = tempfile.mkdtemp(prefix="fio-source.")
        archive = subprocess.run(["git", "--git-dir", source, "archive", "HEAD", "options.c",
                                  "cgroup.c", "engines", "profiles"], capture_output=True, check=False)
        if archive.returncode != 0:
            sys.exit(f"fio-option-table: {source} has no options.c and is not a git directory")
        subprocess.run(["tar", "-x", "-C", unpacked], input=archive.stdout, check=True)
        return write(unpacked, output, describe(source))
    return write(source, output, describe(source))


def write(source, output, label):
    rows, scope, alias = [], {}, {}
    tables = [("general", os.path.join(source, "options.c")), ("general", os.path.join(source, "cgroup.c"))]
    for folder, prefix in (("profiles", "profile:"), ("engines", "")):
        directory = os.path.join(source, folder)
        if os.path.isdir(directory):
            tables += [(prefix + name[:-2], os.path.join(directory, name))
                       for name in sorted(os.listdir(directory)) if name.endswith((".c", ".h"))]
    for where, path in tables:
        if not os.path.exists(path):
            continue
        for name, other in options(path):
            if name not in scope:
                rows.append(name)
                scope[name] = [where]
                alias[name] = other
            elif where not in scope[name]:
                scope[name].append(where)
    with open(output, "w") as out:
        out.write(f"# fio {label}: option\talias\tscope (general, profile:NAME, or the engines it belongs to)\n")
        for name in rows:
            out.write(f"{name}\t{alias[name]}\t{','.join(scope[name])}\n")
    print(f"fio-option-table: {len(rows)} options into {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
