#!/usr/bin/env bash
# Every figure of every post the project started from (the `; ioslice-seed:` lines of
# scenarios/seed-*/*.fio) beside ioslice's, with the ratio and whether it holds by the rule
# `ioslice seeds` judges it by (crates/cli/src/seeds/verdict.rs). Takes seconds.
#
#   bench/seed-tables.sh            # the tables, as text
#   bench/seed-tables.sh --markdown # as docs/experiments.md has them
#   bench/seed-tables.sh --write    # rewrite that section of docs/experiments.md
#
# crates/cli/tests/seed_tables.rs fails when docs/experiments.md and the models disagree.
set -euo pipefail
cd "$(dirname "$0")/.."
export LC_ALL=C
cargo build --quiet --release --locked -p ioslice
bin=target/release/ioslice
files=(scenarios/seed-*/*.fio)
case "${1:-}" in
"") exec "$bin" seeds "${files[@]}" ;;
--markdown) exec "$bin" seeds --output-format markdown "${files[@]}" ;;
--write)
    doc=docs/experiments.md
    begin='<!-- seed-tables: begin -->'
    end='<!-- seed-tables: end -->'
    grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" || {
        echo "seed-tables: $doc has no '$begin' ... '$end' section" >&2
        exit 1
    }
    tables=$(mktemp)
    trap 'rm -f "$tables"' EXIT
    "$bin" seeds --output-format markdown "${files[@]}" > "$tables"
    python3 - "$doc" "$tables" "$begin" "$end" <<'PY'
import sys
doc, tables, begin, end = sys.argv[1:]
text = open(doc).read()
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
open(doc, "w").write(head + begin + "\n" + open(tables).read() + end + tail)
PY
    echo "seed-tables: wrote $doc"
    ;;
*)
    echo "usage: bench/seed-tables.sh [--markdown|--write]" >&2
    exit 2
    ;;
esac
