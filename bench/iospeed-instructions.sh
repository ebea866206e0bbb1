#!/usr/bin/env bash
# What the statistics cost each request, counted in instructions rather than timed: the
# IOSpeed workload (8 threads or processes of random 4 KiB I/O, one request in flight each,
# on a device with no latency) under valgrind's instruction counter, on both drivers:
#
#   1. the engine on its in-memory backend (`crates/engine/examples/iospeed.rs`), under noop,
#      mq-deadline and bfq;
#   2. the simulator on `sim:null` (`crates/sim/benches/iospeed.rs --one`), under noop,
#      deadline and bfq;
#
# each with the statistics kept (`Statistics::Detailed`) and with totals only
# (`Statistics::Totals`). Each configuration runs twice, with SMALL and LARGE requests per
# thread; instructions per request are the difference of the two counts over the difference
# of the requests, so start-up and shutdown cancel out. A timed run on a shared machine
# spreads by ±5 %; these counts repeat to within 0.3 % for the engine (its threads meet in a
# different order each run) and exactly for the simulator.
#
#     bench/iospeed-instructions.sh [SMALL LARGE]      # default 2000 8000
#
# Needs valgrind (`apt-get install valgrind`).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
small=${1:-2000}
large=${2:-8000}
command -v valgrind >/dev/null || { echo "iospeed-instructions: needs valgrind" >&2; exit 2; }

cargo build --quiet --release -p ioslice-engine --example iospeed
engine=target/release/examples/iospeed
sim=$(cargo bench -p ioslice-sim --bench iospeed --no-run 2>&1 |
    sed -n 's/.*Executable benches\/iospeed.rs (\(.*\))/\1/p')
[ -x "$sim" ] || { echo "iospeed-instructions: the simulator's bench did not build" >&2; exit 1; }

# Instructions one run executes: valgrind's "I refs" line.
instructions() {
    valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
        sed -n 's/.*I *refs: *//p' | tr -d ,
}

engine_run() { # RW SCHED on|off REQUESTS
    instructions "$engine" --rw "$1" --sched "$2" --stats "$3" --requests "$4" --rounds 1
}

sim_run() { # RW SCHED on|off REQUESTS
    instructions "$sim" --one "$1" "$2" "$3" "$4"
}

# One table: instructions per request with the statistics on and off, and their ratio.
table() { # DRIVER SCHEDULERS...
    local driver=$1
    shift
    printf '%-10s %-12s %16s %16s %8s\n' workload policy "instr/req on" "instr/req off" "on/off"
    for rw in randread randwrite; do
        for sched in "$@"; do
            local per=()
            for stats in on off; do
                local a b
                a=$("${driver}_run" "$rw" "$sched" "$stats" "$small")
                b=$("${driver}_run" "$rw" "$sched" "$stats" "$large")
                per+=("$(( (b - a) / (8 * (large - small)) ))")
            done
            printf '%-10s %-12s %16d %16d %8.3f\n' "$rw" "$sched" "${per[0]}" "${per[1]}" \
                "$(echo "${per[0]} / ${per[1]}" | bc -l)"
        done
    done
}

echo "== engine, in-memory backend: 8 threads, $small and $large requests each"
table engine noop mq-deadline bfq
echo
echo "== simulator, sim:null: 8 processes, $small and $large requests each"
table sim noop deadline bfq
