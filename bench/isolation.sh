#!/usr/bin/env bash
# Latency isolation on a device that is the bottleneck: a high-priority client (4 KiB random
# reads at depth 1, RT 0, cgroup weight 1000) beside a greedy antagonist (4 KiB random reads
# at depth 32, or 128 KiB sequential writes at depth 8; BE 4, weight 100), on the SSD model,
# both in the simulator (`--device sim:PRESET`) and through the real engine on the model
# served on the real clock (`--device timed:sim:PRESET`). Per policy: the client's p50, p99
# and p99.9 completion latency, its p99 against its own alone, and the pair's total
# throughput against the pair's under noop (unscheduled).
#
#     bench/isolation.sh [PRESET]        # default ssd; each run is 5 s (the job files' runtime)
#
# Policies: noop, mq-deadline (priorities), bfq with parallel=0 and =1, and noop with the
# antagonist's group limited (io.max: riops for the readers, wbps for the writer). The timed
# runs need the machine quiet: the disk thread answers late when it waits for a CPU.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
preset=${1:-ssd}
cargo build --quiet --release -p ioslice
bin=target/release/ioslice
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

policies=(noop mq-deadline bfq:parallel=0 bfq:parallel=1 limit)
for where in "sim:$preset" "timed:sim:$preset"; do
    tag=${where%%:*}
    "$bin" run bench/isolation/hp.fio --device "$where" --sched noop --output-format json \
        >"$out/$tag.solo.json"
    for kind in randread seqwrite; do
        for policy in "${policies[@]}"; do
            args=(--sched "$policy")
            if [[ $policy == limit ]]; then
                limit="bulk:riops=10000"
                [[ $kind == seqwrite ]] && limit="bulk:wbps=200m"
                args=(--sched noop --cgroup "$limit")
            fi
            "$bin" run "bench/isolation/$kind.fio" --device "$where" "${args[@]}" \
                --output-format json >"$out/$tag.$kind.$policy.json"
        done
    done
done

python3 - "$out" "$preset" "${policies[@]}" <<'PY'
import json, sys
out, preset, policies = sys.argv[1], sys.argv[2], sys.argv[3:]
def load(name):
    text = open(f"{out}/{name}.json").read()
    return json.loads(text[text.index("{"):])
def hp(report):
    job = next(j for j in report["jobs"] if j["jobname"] == "hp")
    p = job["read"]["clat_ns"]["percentile"]
    return [p["50.000000"] / 1000, p["99.000000"] / 1000, p["99.900000"] / 1000]
def total(report):
    return sum(j["read"]["bw_bytes"] + j["write"]["bw_bytes"] for j in report["jobs"]) / 1e6
for tag, what in (("sim", f"the simulator on sim:{preset}"), ("timed", f"the engine on timed:sim:{preset}")):
    solo = hp(load(f"{tag}.solo"))
    print(f"{what}: the client alone p50/p99/p99.9 {solo[0]:.0f} / {solo[1]:.0f} / {solo[2]:.0f} µs")
    for kind, name in (("randread", "4 KiB random reads at depth 32"), ("seqwrite", "128 KiB sequential writes at depth 8")):
        base = total(load(f"{tag}.{kind}.noop"))
        print(f"  beside {name} (pair under noop: {base:.1f} MB/s)")
        print(f"    {'policy':<16}{'p50 µs':>9}{'p99 µs':>9}{'p99.9 µs':>10}{'p99 × alone':>13}{'MB/s':>9}{'× noop':>8}")
        for policy in policies:
            report = load(f"{tag}.{kind}.{policy}")
            l, t = hp(report), total(report)
            label = policy if policy != "limit" else ("limit riops=10k" if kind == "randread" else "limit wbps=200M")
            print(f"    {label:<16}{l[0]:>9.0f}{l[1]:>9.0f}{l[2]:>10.0f}{l[1] / solo[1]:>13.2f}{t:>9.1f}{t / base:>8.2f}")
PY
