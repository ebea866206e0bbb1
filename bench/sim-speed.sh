#!/usr/bin/env bash
# The simulator's speed, whole process, wall time:
#
#   1. `ioslice run bench/sim-speed/four-readers.fio --device sim:null` (2 097 152 requests)
#      under noop, deadline, bfq and cfq, alternated ROUNDS times so load that comes and goes
#      moves every scheduler alike; prints each one's median, simulated requests per second,
#      and its time against noop's (the median of the per-round ratios).
#   2. A study grid: `ioslice compare bench/sim-speed/grid-cell.fio` over 8 schedulers and 8
#      client counts (64 runs) on one thread and on every core (RAYON_NUM_THREADS), alternated;
#      prints each side's median and the speed-up.
#
#     bench/sim-speed.sh [ROUNDS]      # default 5
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rounds=${1:-5}
cargo build --quiet --release -p ioslice
bin=target/release/ioslice
requests=2097152

wall() { # the wall time of one command, in seconds
    local start end
    start=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc -l
}
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

scheds=(noop deadline bfq cfq)
declare -A times ratios
for ((round = 1; round <= rounds; round++)); do
    declare -A this
    for sched in "${scheds[@]}"; do
        this[$sched]=$(wall "$bin" run bench/sim-speed/four-readers.fio --device sim:null --sched "$sched" --output-format terse)
        times[$sched]+="${this[$sched]} "
    done
    for sched in "${scheds[@]}"; do
        ratios[$sched]+="$(echo "${this[$sched]} / ${this[noop]}" | bc -l) "
    done
done
echo "four readers at depth 64 on sim:null, $requests requests, median of $rounds alternated rounds ($(nproc) cores):"
printf '  %-10s %8s %14s %10s\n' scheduler seconds "requests/s" "× noop"
for sched in "${scheds[@]}"; do
    t=$(tr ' ' '\n' <<<"${times[$sched]}" | grep . | median)
    r=$(tr ' ' '\n' <<<"${ratios[$sched]}" | grep . | median)
    printf '  %-10s %8.3f %12.2f M %10.2f\n' "$sched" "$t" "$(echo "$requests / $t / 1000000" | bc -l)" "$r"
done

grid=(--sched noop,deadline,mq-deadline,anticipatory,cfq,bfq,bfq:low_latency=0,cfq:slice_idle=0
    --clients 1,2,3,4,5,6,7,8 --output-format json)
one="" all=""
for ((round = 1; round <= rounds; round++)); do
    one+="$(RAYON_NUM_THREADS=1 wall "$bin" compare bench/sim-speed/grid-cell.fio "${grid[@]}") "
    all+="$(wall "$bin" compare bench/sim-speed/grid-cell.fio "${grid[@]}") "
done
t1=$(tr ' ' '\n' <<<"$one" | grep . | median)
tn=$(tr ' ' '\n' <<<"$all" | grep . | median)
echo "a grid of 64 runs (8 schedulers × 1–8 clients, bench/sim-speed/grid-cell.fio on sim:sata-7200):"
printf '  1 thread %.2f s, %d threads %.2f s: %.2f× faster\n' "$t1" "$(nproc)" "$tn" "$(echo "$t1 / $tn" | bc -l)"
