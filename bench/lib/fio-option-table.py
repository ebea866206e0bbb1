#!/usr/bin/env python3
"""fio's option table as data, from fio's source tree.

    bench/lib/fio-option-table.py FIO_SOURCE_DIR [OUTPUT]

Writes crates/fio/src/jobfile/fio-options.tsv (or OUTPUT): one line per option fio defines,
with its alias, where it belongs (`general` for options.c and cgroup.c, `profile:NAME` for
profiles/NAME.c, or the engines whose option it is: engines/NAME.c and .h), its value type,
the bounds fio declares, its parsing priority and the words it takes, read from the `.name`, `.alias`, `.type`
(FIO_OPT_INT is `int`, FIO_OPT_STR_VAL `size`, FIO_OPT_STR_VAL_TIME `time`, ...), `.minval`,
`.maxval` (`.minfp`, `.maxfp` for floats), `.is_seconds` (a time whose bare number is in
seconds, `time_s`, else microseconds), `.prio` and `.posval[].ival` fields of fio's option tables. A bound
written as a macro is resolved from fio's headers (os/os-linux.h for the platform's); one
written as `sizeof(...)` is left out. The bounds fio's option_init adds are written in too:
0..1 for a bool, UINT_MAX for an int and ULLONG_MAX for a ull without a maximum. ioslice reads the file to tell a misspelt
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
TYPE = re.compile(r'\.type\s*=\s*FIO_OPT_(\w+)')
FIELD = re.compile(r'\.(minval|maxval|minfp|maxfp|prio|is_seconds)\s*=\s*([^,\n]+?)\s*,')
IVAL = re.compile(r'\.ival\s*=\s*"([^"]*)"')
DEFINE = re.compile(r'^#define\s+(\w+)\s+([^/\n]+?)\s*(?:/\*.*)?$', re.M)

# fio's option types under the names the table uses.
TYPES = {
    "STR": "str", "STR_MULTI": "str_multi", "STR_ULL": "str", "STR_STORE": "str_store",
    "STR_VAL": "size", "STR_VAL_ZONE": "size_zone", "STR_VAL_TIME": "time", "INT": "int",
    "ULL": "ull", "BOOL": "bool", "STR_SET": "str_set", "RANGE": "range",
    "FLOAT_LIST": "float_list", "DEPRECATED": "deprecated",
    "SOFT_DEPRECATED": "soft_deprecated", "UNSUPPORTED": "unsupported",
}


def macros(source):
    """`#define NAME value` of fio's headers: the top level and Linux's os header."""
    found = {}
    paths = [os.path.join(source, "os", "os-linux.h")]
    paths += [os.path.join(source, n) for n in sorted(os.listdir(source)) if n.endswith(".h")]
    for path in paths:
        if os.path.exists(path):
            for name, value in DEFINE.findall(open(path, errors="replace").read()):
                found.setdefault(name, value)
    return found


def number(text, defines, depth=0):
    """A bound as an integer (or float), macros resolved; None when it cannot be."""
    text = re.sub(r'(?<=\d)(ULL|UL|LL|U|L)\b', '', text.strip())
    if "sizeof" in text or depth > 8:
        return None
    for name in set(re.findall(r'[A-Za-z_]\w*', text)):
        if name not in defines:
            return None
        value = number(defines[name], defines, depth + 1)
        if value is None:
            return None
        text = re.sub(rf'\b{name}\b', str(value), text)
    if not re.fullmatch(r'[0-9.()+\-*/<> ]+', text):
        return None
    try:
        value = eval(text, {"__builtins__": {}})  # digits and operators only, checked above
    except (SyntaxError, ZeroDivisionError):
        return None
    return int(value) if float(value).is_integer() else value


def attributes(block, defines):
    """An option's type, bounds and priority from the text of its table entry."""
    kind = TYPE.search(block)
    fields = dict(FIELD.findall(block))
    low = fields.get("minval", fields.get("minfp"))
    high = fields.get("maxval", fields.get("maxfp"))
    low = number(low, defines) if low is not None else None
    high = number(high, defines) if high is not None else None
    name = TYPES.get(kind.group(1), kind.group(1).lower()) if kind else ""
    if name == "time" or (name in ("int", "ull", "size") and ".is_time" in block):
        name = "time_s" if number(fields.get("is_seconds", "0"), defines) else "time"
    # What fio's option_init (parse.c) fills in before any value is read.
    if name == "bool":
        low, high = 0, 1
    elif name == "int" and not high:
        high = 2**32 - 1
    elif name == "ull" and not high:
        high = 2**64 - 1
    show = lambda v: "" if v is None else str(v)
    words = "|".join(v for v in IVAL.findall(block) if v)
    return name, show(low), show(high), fields.get("prio", "0").strip(), words


def options(path, defines):
    """(name, alias, type, min, max, prio, values) of every option in a C file's option tables; an engine's own
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
        found.append((m.group(1), alias.group(1) if alias else "", *attributes(block, defines)))
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
        archive = subprocess.run(["git", "--git-dir", source, "archive", "HEAD"],
                                 capture_output=True, check=False)
        if archive.returncode != 0:
            sys.exit(f"fio-option-table: {source} has no options.c and is not a git directory")
        subprocess.run(["tar", "-x", "-C", unpacked], input=archive.stdout, check=True)
        return write(unpacked, output, describe(source))
    return write(source, output, describe(source))


def write(source, output, label):
    rows, scope, alias, kind = [], {}, {}, {}
    defines = macros(source)
    tables = [("general", os.path.join(source, "options.c")), ("general", os.path.join(source, "cgroup.c"))]
    for folder, prefix in (("profiles", "profile:"), ("engines", "")):
        directory = os.path.join(source, folder)
        if os.path.isdir(directory):
            tables += [(prefix + name[:-2], os.path.join(directory, name))
                       for name in sorted(os.listdir(directory)) if name.endswith((".c", ".h"))]
    for where, path in tables:
        if not os.path.exists(path):
            continue
        for name, other, *typed in options(path, defines):
            if name not in scope:
                rows.append(name)
                scope[name] = [where]
                alias[name] = other
                kind[name] = typed
            elif where not in scope[name]:
                scope[name].append(where)
    with open(output, "w") as out:
        out.write(f"# fio {label}: option\talias\tscope (general, profile:NAME, or the engines it "
                  "belongs to)\ttype\tmin\tmax\tprio\tvalues (a word option's, separated by |)\n")
        for name in rows:
            out.write("\t".join([name, alias[name], ",".join(scope[name]), *kind[name]]) + "\n")
    print(f"fio-option-table: {len(rows)} options into {output}", file=sys.stderr)


if __name__ == "__main__":
    main()
