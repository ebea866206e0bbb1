#!/usr/bin/env bash
# Coverage-guided fuzzing of ioslice's parsers and simulator with AFL++ (cargo-afl, stable
# Rust). See README.md here.
#
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Targets: jobfile simulate sched device cgroup controller host (default: all, in that
# order). Each runs alone, niced, for SECONDS_PER_TARGET (default 600) and resumes the
# queue it left last time. Results go to $FUZZ_OUT (default fuzz/target/afl/): TARGET/default/
# holds AFL++'s queue, crashes/, hangs/ and fuzzer_stats; a summary line per target is
# printed at the end, and the exit status is 1 if any target crashed (a hang, which a loaded
# machine can fake, is only counted). A crash or hang found is an input to copy into
# fuzz/regressions/TARGET/ once fixed, where `cargo test -p ioslice --test
# fuzz_regressions` replays it.
#
# Seeds: fuzz/seeds/TARGET/, fuzz/regressions/TARGET/, and for jobfile and simulate every
# scenarios/**/*.fio plus, when present, the job files in $FUZZ_EXTRA_SEEDS (default
# ../shared/corpus/fio-examples; read, never copied into the tree).
#
# Limits: 512 MB of memory per input (a larger allocation aborts: a crash), and a time
# limit per input of $FUZZ_TIMEOUT_MS (default 1000 ms for simulate, 200 ms otherwise).
set -euo pipefail
cd "$(dirname "$0")"
fuzz_dir=$(pwd)
repo=$(cd .. && pwd)

seconds=${1:-600}
shift || true
all=(jobfile simulate sched device cgroup controller host)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")
out=${FUZZ_OUT:-$fuzz_dir/target/afl}
extra=${FUZZ_EXTRA_SEEDS:-$repo/../shared/corpus/fio-examples}

if ! cargo afl --version >/dev/null 2>&1; then
    echo "fuzz: cargo-afl is missing: cargo install --locked cargo-afl (needs make and a C compiler)" >&2
    exit 1
fi
nice -n 10 cargo afl build --release --locked --quiet

# Words AFL++ splices into inputs: option names and values the parsers know.
dict=$out/ioslice.dict
mkdir -p "$out"
{
    grep -ohE '"[a-z][a-z0-9_:.-]{1,30}"' "$repo"/crates/fio/src/jobfile/*.rs \
        "$repo"/crates/fio/src/job.rs "$repo"/crates/sim/src/host.rs \
        "$repo"/crates/sim/src/preset/*.rs "$repo"/crates/core/src/registry.rs \
        "$repo"/crates/cli/src/cgroup_arg.rs "$repo"/crates/cli/src/controller_arg.rs
    printf '"%s"\n' '[global]' '${FIO_BS}' ';ioslice|' '|--sched ' '|--device sim:' '|--host ' \
        '|--cgroup ' '|--controller ' 'include ' '=max' '%' 'k' 'M' 'G' 'ms' 'us' ':' ','
} | sort -u >"$dict"

export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_AUTORESUME=1
# Not pinned to a core: on a shared machine (or beside another campaign) afl-fuzz would
# otherwise refuse to start when every core looks taken.
export AFL_NO_AFFINITY=1
for target in "${targets[@]}"; do
    seeds=$out/$target.seeds
    rm -rf "$seeds"
    mkdir -p "$seeds"
    cp "$fuzz_dir/seeds/$target"/* "$seeds/" 2>/dev/null || true
    cp "$fuzz_dir/regressions/$target"/* "$seeds/" 2>/dev/null || true
    if [ "$target" = jobfile ] || [ "$target" = simulate ]; then
        dirs=("$repo/scenarios")
        [ ! -d "$extra" ] || dirs+=("$extra")
        find "${dirs[@]}" -name '*.fio' -size -8k |
            while read -r file; do cp "$file" "$seeds/$(echo "${file#"$repo"/}" | tr / _)"; done
    fi
    timeout=${FUZZ_TIMEOUT_MS:-$([ "$target" = simulate ] && echo 1000 || echo 200)}
    echo "== fuzz $target for ${seconds}s ($(find "$seeds" -type f | wc -l) seeds, timeout ${timeout} ms)"
    nice -n 10 cargo afl fuzz -i "$seeds" -o "$out/$target" -V "$seconds" -m 512 -t "$timeout" \
        -x "$dict" -- "$fuzz_dir/target/release/$target" >"$out/$target.log" 2>&1 || {
        echo "fuzz: afl-fuzz failed on $target; the end of $out/$target.log:" >&2
        tail -20 "$out/$target.log" >&2
        exit 1
    }
done

echo "== results (in $out)"
status=0
for target in "${targets[@]}"; do
    stats=$out/$target/default/fuzzer_stats
    field() { sed -n "s/^$1 *: //p" "$stats"; }
    crashes=$(find "$out/$target/default/crashes" -type f -name 'id:*' | wc -l)
    hangs=$(find "$out/$target/default/hangs" -type f -name 'id:*' | wc -l)
    echo "$target: $(field run_time)s, $(field execs_done) execs, $(field execs_per_sec)/s, corpus $(field corpus_count), edges $(field edges_found)/$(field total_edges) ($(field bitmap_cvg)), crashes $crashes, hangs $hangs"
    [ "$crashes" -eq 0 ] || status=1
done
exit $status
