#!/usr/bin/env python3
"""Import circles between the modules of each crate in crates/*/src.

A module is a file (`foo.rs`, or `foo/mod.rs` for the directory). Module A imports module B when
A's file names B in a `use crate::…`, `use super::…` or `crate::…`/`super::…` path; a path into B's
descendants counts as B's descendant. Child modules naturally refer to their parent (`super::`)
and parents declare their children (`mod x;`), so an edge from a module to its own ancestor is
ignored: what is reported are circles among siblings and cousins, found as strongly connected
components of the graph. Exit status 1 when any crate has one.

Usage: bench/lib/module-cycles.py [CRATE_DIR...]   (default: every crates/*/ directory)
"""

import os
import re
import sys

PATH = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b(crate|super)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*?)\}", re.S)


def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] == "mod" or rel == ["lib"] or rel == ["main"]:
        rel = rel[:-1]
    return tuple(rel)


def strip_comments(text):
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r"/\*.*?\*/", "", text, flags=re.S)


def resolve(module, root, parts, modules):
    if root == "crate":
        base = ()
    else:
        # `super` in foo/mod.rs or foo.rs is the parent of foo.
        base = module[:-1]
    path = base + tuple(parts)
    # The longest prefix that is a module.
    while path and path not in modules:
        path = path[:-1]
    return path


def targets(text, module, modules):
    found = set()
    for match in GROUP.finditer(text):
        root, prefix = match.group(1), [p for p in match.group(2).split("::") if p]
        for item in match.group(3).split(","):
            first = item.strip().split("::")
            names = [p.strip() for p in first if p.strip() and p.strip() != "self"]
            found.add(resolve(module, root, prefix + names[:2], modules))
    for match in PATH.finditer(text):
        root, parts = match.group(1), [p for p in match.group(2).split("::") if p]
        found.add(resolve(module, root, parts, modules))
    return found


def components(graph):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    sys.setrecursionlimit(10000)
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return out


def crate_cycles(crate):
    src = os.path.join(crate, "src")
    files = []
    for dirpath, _, names in os.walk(src):
        files += [os.path.join(dirpath, n) for n in names if n.endswith(".rs")]
    modules = {module_of(src, f): f for f in files}
    graph = {}
    for module, path in modules.items():
        with open(path, encoding="utf-8") as handle:
            text = strip_comments(handle.read())
        edges = set()
        for target in targets(text, module, modules):
            if not target or target == module:
                continue
            if module[: len(target)] == target or target[: len(module)] == module:
                continue  # an ancestor or a descendant
            # Compare siblings: the children of the deepest common ancestor.
            common = 0
            while common < min(len(module), len(target)) and module[common] == target[common]:
                common += 1
            edges.add((module[: common + 1], target[: common + 1]))
        for a, b in edges:
            if a != b:
                graph.setdefault(a, set()).add(b)
    return components(graph)


def main():
    crates = sys.argv[1:] or sorted(
        os.path.join("crates", d) for d in os.listdir("crates") if os.path.isdir(os.path.join("crates", d, "src"))
    )
    found = False
    for crate in crates:
        for group in crate_cycles(crate):
            found = True
            names = ", ".join("::".join(m) for m in group)
            print(f"{crate}: circle among {names}")
    if not found:
        print("module-cycles: no import circles in " + ", ".join(crates))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
