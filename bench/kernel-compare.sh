#!/usr/bin/env bash
# bench/kernel-compare.sh — the kernel's I/O schedulers against ioslice's, on the same device.
#
# Makes a loop device over a file on tmpfs and runs the job files in bench/kernel-compare/ on it:
#   - with the kernel's schedulers through fio: none, mq-deadline, bfq and bfq with slice_idle=0,
#     the weighted groups in real cgroups (v1 blkio.bfq.weight, or v2 io.bfq.weight / io.weight);
#   - with ioslice's policies (noop, bfq, bfq:parallel=0 — the kernel's one queue in service —
#     and bfq:slice_idle=0) on top of the kernel's `none`, through
#     `ioslice run JOB --device /dev/loopN --sched ...`, when that command is available.
# Then prints one table: workload x scheduler -> IOPS, MB/s, ratios to kernel `none` and to ioslice
# noop, completion latency percentiles and, for the weighted workloads, each group's share of the
# bytes against its weight's share (and the largest deviation from it, in %).
#
# Usage: sudo bench/kernel-compare.sh [--runtime SECONDS] [--rounds N] [--ioslice PATH] [--out DIR]
#                                     [--no-ioslice] [--halt-poll-ns NS]
#   --runtime    seconds per run (default 10; KC_RUNTIME in the job files)
#   --rounds     how many times every row runs (default 3). Each round runs every workload under
#                every scheduler in turn, so the rows a ratio compares ran minutes apart at most.
#                The table shows medians: IOPS and MB/s the median of the rounds, a ratio the
#                median of the ratios within each round, the latencies those of the median round;
#                group shares pool the bytes of all rounds.
#   --ioslice    the ioslice binary (default: $IOSLICE, `ioslice` on PATH, else
#                $CARGO_TARGET_DIR/release/ioslice or target/release/ioslice)
#   --out        where the raw fio/ioslice JSON and the table are kept (default /tmp/kernel-compare.DATE)
#   --no-ioslice only the kernel rows
#   --halt-poll-ns  in a KVM guest with the haltpoll cpuidle driver: how long an idle vCPU polls
#                before it halts (guest_halt_poll_ns), for the duration of the runs, restored on
#                exit. Left alone by default; the table names the value in force. Some clouds set 0
#                (halt at once; waking a halted vCPU then costs 15-20 us on this project's
#                machines), the driver's own default is 200000. Every row, kernel's and ioslice's,
#                runs under the same setting.
#
# Needs root (loop devices, mounts, cgroups, sysfs); without it, it says so and exits 0. Needs fio,
# losetup and python3 (python3 parses the JSON: the latency percentiles of several fio processes are
# merged from fio's json+ histograms, which jq does not do comfortably); it installs nothing, says
# how to get what is missing and exits 0. Everything it makes (tmpfs, loop device, cgroups) is undone
# on exit, also on failure or Ctrl-C.
set -euo pipefail

# --- Settings --------------------------------------------------------------------------------------
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs_dir="$here/kernel-compare"
repo_root=$(cd "$here/.." && pwd)
runtime=${KC_RUNTIME:-10}
rounds=3
ioslice_bin=${IOSLICE:-}
out_dir=""
with_ioslice=1
halt_poll_ns=""            # --halt-poll-ns: empty leaves the machine's setting alone
halt_poll_file=/sys/module/haltpoll/parameters/guest_halt_poll_ns
halt_poll_saved=""         # the value to restore on exit
dev_mib=2048                # the loop device: 8 groups x 256 MiB regions (see the job files)
tmpfs_mib=$((dev_mib + 64)) # the tmpfs holding its backing file
workloads=(randread-qd32 seqread-psync-8groups randread-qd8-8groups)
kernel_scheds=(none mq-deadline bfq bfq:slice_idle=0)
ioslice_scheds=(noop bfq bfq:parallel_lead=0 bfq:parallel=0 bfq:slice_idle=0)

say() { printf 'kernel-compare: %s\n' "$*" >&2; }
# shellcheck source=lib/kernel-runs.sh
source "$here/lib/kernel-runs.sh"

while (($#)); do
    case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --ioslice) ioslice_bin=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --no-ioslice) with_ioslice=0; shift ;;
    --halt-poll-ns) halt_poll_ns=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown argument '$1' (see --help)"; exit 2 ;;
    esac
done
if ! [[ $runtime =~ ^[1-9][0-9]*$ ]]; then say "--runtime wants whole seconds, got '$runtime'"; exit 2; fi
if ! [[ $rounds =~ ^[1-9][0-9]*$ ]]; then say "--rounds wants a positive whole number, got '$rounds'"; exit 2; fi
if [[ -n $halt_poll_ns ]] && ! [[ $halt_poll_ns =~ ^[0-9]+$ ]]; then
    say "--halt-poll-ns wants nanoseconds as a whole number, got '$halt_poll_ns'"; exit 2
fi

# --- Preconditions: root and tools. Missing ones are a skip (exit 0), not a failure. -------------
if ((EUID != 0)); then
    echo "kernel-compare: needs root to make a loop device (skipping)"
    exit 0
fi
missing=()
command -v fio >/dev/null || missing+=("fio (apt-get install fio)")
command -v losetup >/dev/null || missing+=("losetup (apt-get install util-linux)")
command -v python3 >/dev/null || missing+=("python3 (apt-get install python3)")
if ((${#missing[@]})); then
    for m in "${missing[@]}"; do echo "kernel-compare: missing $m"; done
    echo "kernel-compare: install the above and run again (skipping)"
    exit 0
fi
# The backing file lives in memory: leave at least 1 GiB to everything else.
avail_mib=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
if ((avail_mib < tmpfs_mib + 1024)); then
    echo "kernel-compare: needs $((tmpfs_mib + 1024)) MiB of available memory, has $avail_mib (skipping)"
    exit 0
fi

out_dir=${out_dir:-/tmp/kernel-compare.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

# --- Cleanup, registered before anything is made. -------------------------------------------------
work=""       # scratch directory; the tmpfs is mounted at $work/mnt
loop=""       # /dev/loopN
cleanup() {
    local rc=$?
    set +e
    if [[ -n $halt_poll_saved ]]; then
        echo "$halt_poll_saved" >"$halt_poll_file" || say "could not restore $halt_poll_file to $halt_poll_saved"
    fi
    kr_kill_children
    if [[ -n $loop ]]; then losetup -d "$loop" || say "could not detach $loop"; fi
    if [[ -n $work ]]; then
        mountpoint -q "$work/mnt" && { umount "$work/mnt" || say "could not unmount $work/mnt"; }
        rm -rf "$work"
    fi
    kr_cgroups_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- How idle vCPUs wait (KVM guests with the haltpoll cpuidle driver). --------------------------
if [[ -n $halt_poll_ns ]]; then
    if [[ -w $halt_poll_file ]]; then
        halt_poll_saved=$(cat "$halt_poll_file")
        echo "$halt_poll_ns" >"$halt_poll_file"
        say "guest_halt_poll_ns set to $halt_poll_ns for the runs (was $halt_poll_saved)"
    else
        say "--halt-poll-ns: no $halt_poll_file here (not a KVM guest with haltpoll); ignored"
    fi
fi
halt_poll_note="not a haltpoll guest"
[[ -r $halt_poll_file ]] && halt_poll_note="guest_halt_poll_ns=$(cat "$halt_poll_file")"

# --- The device: a file on tmpfs behind a loop device with direct I/O. ---------------------------
work=$(mktemp -d /tmp/kernel-compare-work.XXXXXX)
kr_work=$work
mkdir "$work/mnt"
mount -t tmpfs -o "size=${tmpfs_mib}m" kernel-compare "$work/mnt"
backing="$work/mnt/backing"
# Allocate every page now (fallocate, else write zeros): reading a hole of a sparse tmpfs file
# would be served from the shared zero page and make the device look faster than it is.
if ! fallocate -l "${dev_mib}MiB" "$backing" 2>/dev/null; then
    dd if=/dev/zero of="$backing" bs=1M count="$dev_mib" status=none
fi
# --direct-io=on makes the loop driver read the backing file with O_DIRECT (tmpfs accepts it
# since Linux 6.6), so no second page cache sits between the scheduler and the memory.
if loop=$(losetup --find --show --direct-io=on "$backing" 2>/dev/null); then
    :
else
    loop=$(losetup --find --show "$backing")
fi
loop_name=$(basename "$loop")
sysq="/sys/block/$loop_name/queue"
loop_dio=$(cat "/sys/block/$loop_name/loop/dio" 2>/dev/null || echo "?")
say "device $loop over $backing (${dev_mib} MiB, loop dio=$loop_dio, nr_requests=$(cat "$sysq/nr_requests"))"
[[ $loop_dio == 1 ]] || say "warning: the loop device does not use direct I/O; figures include the page cache"
export KC_DEVICE=$loop KC_RUNTIME=$runtime

# --- Kernel schedulers: make bfq available, check which ones the device offers. -----------------
if ! grep -qw bfq "$sysq/scheduler" && command -v modprobe >/dev/null; then
    modprobe bfq 2>/dev/null || true
fi
offered=$(tr -d '[]' <"$sysq/scheduler")
say "kernel schedulers offered for $loop_name: $offered"

set_kernel_sched() { kr_set_kernel_sched "$sysq" "$1"; }

# --- Cgroups for the weighted groups (bench/lib/kernel-runs.sh). -----------------------------------
kr_cgroups_init
cg_mode=$kr_cg_mode

# --- One kernel run: fio under the device's current scheduler, the weighted sections in cgroups. --
run_kernel() { kr_run_fio "$1" "$2"; }

# --- ioslice: is `ioslice run --device` there, and does it work on this device? ------------------
ioslice_reason=""
if ((with_ioslice)); then
    if [[ -z $ioslice_bin ]]; then
        for c in "$(command -v ioslice || true)" "${CARGO_TARGET_DIR:-$repo_root/target}/release/ioslice" \
            "$repo_root/target/release/ioslice"; do
            if [[ -n $c && -x $c ]]; then ioslice_bin=$c; break; fi
        done
    fi
    if [[ -z $ioslice_bin || ! -x $ioslice_bin ]]; then
        ioslice_reason="no ioslice binary (build it: cargo build --release -p ioslice, or pass --ioslice PATH)"
    else
        # A tiny read job on the loop device: 1 MiB of 4 KiB reads.
        probe="$work/probe.fio"
        printf '[probe]\nfilename=%s\nrw=read\nbs=4k\nsize=1m\ndirect=1\n' "$loop" >"$probe"
        echo none >"$sysq/scheduler"
        if ! timeout 60 "$ioslice_bin" run "$probe" --device "$loop" --sched noop --output-format json \
            >"$out_dir/probe.ioslice.json" 2>"$out_dir/probe.ioslice.log"; then
            ioslice_reason="'ioslice run --device $loop' failed: $(grep -v '^[[:space:]]*$' "$out_dir/probe.ioslice.log" | tail -n 1)"
        elif ! python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["jobs"][0]["read"]["io_bytes"] > 0' \
            "$out_dir/probe.ioslice.json" 2>/dev/null; then
            ioslice_reason="'ioslice run --device $loop' gave no fio JSON with bytes read"
        fi
    fi
else
    ioslice_reason="--no-ioslice"
fi
if [[ -z $ioslice_reason ]]; then say "ioslice: $ioslice_bin"; else say "ioslice rows skipped: $ioslice_reason"; fi

# --- The runs. Each run goes into a manifest the report reads: round, workload, job file, label, files.
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
manifest="$out_dir/manifest.tsv"
: >"$manifest"
for round in $(seq 1 "$rounds"); do
    for wl in "${workloads[@]}"; do
        job="$jobs_dir/$wl.fio"
        for spec in "${kernel_scheds[@]}"; do
            name=${spec%%:*}
            label="kernel $spec"
            prefix="$out_dir/r$round.$wl.kernel-${spec//[:=]/-}"
            if ! grep -qw "$name" <<<"$offered"; then
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "SKIP: the kernel offers no $name" >>"$manifest"
                continue
            fi
            say "round $round/$rounds, $wl: $label (${runtime}s)"
            set_kernel_sched "$spec"
            if run_kernel "$job" "$prefix"; then
                files=$(compgen -G "$prefix.*json" | tr '\n' ' ')
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "$files" >>"$manifest"
            else
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "SKIP: fio failed, see $prefix*.log" >>"$manifest"
            fi
        done
        for spec in "${ioslice_scheds[@]}"; do
            label="ioslice $spec"
            if [[ -n $ioslice_reason ]]; then
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "SKIP: skipped (see the note below)" >>"$manifest"
                continue
            fi
            prefix="$out_dir/r$round.$wl.ioslice-${spec//[:=]/-}"
            say "round $round/$rounds, $wl: $label on kernel none (${runtime}s)"
            # ioslice schedules on top of the kernel's `none`, which passes requests straight through.
            set_kernel_sched none
            if "$ioslice_bin" run "$job" --device "$loop" --sched "$spec" --output-format json \
                >"$prefix.json" 2>"$prefix.log"; then
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "$prefix.json" >>"$manifest"
            else
                printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$wl" "$job" "$label" "SKIP: ioslice failed: $(tail -n 1 "$prefix.log")" >>"$manifest"
            fi
        done
    done
done

# --- The table. ---------------------------------------------------------------------------------
report() {
    python3 - "$manifest" <<'PY'
import json, re, sys

def load(path):
    # fio may print a warning line before its JSON; start at the first brace.
    text = open(path).read()
    return json.loads(text[text.index("{"):])

def weights_of(jobfile):
    weights, section = {}, None
    for line in open(jobfile):
        line = line.strip()
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            section = m.group(1).strip()
            continue
        m = re.match(r"^cgroup_weight\s*=\s*(\d+)", line)
        if m and section and section != "global":
            weights[section] = int(m.group(1))
    return weights

def percentile_from_bins(bins, p):
    total = sum(bins.values())
    need, seen = total * p / 100.0, 0
    for value in sorted(bins):
        seen += bins[value]
        if seen >= need:
            return value
    return None

import statistics

def run_result(files):
    """One run's totals, bytes per job name, and completion latency percentiles in us."""
    jobs = []
    for f in files.split():
        jobs.extend(load(f).get("jobs", []))
    iops = sum(j["read"]["iops"] for j in jobs)
    bw = sum(j["read"]["bw_bytes"] for j in jobs)
    by_name = {}
    for j in jobs:
        by_name[j["jobname"]] = by_name.get(j["jobname"], 0) + j["read"]["io_bytes"]
    # Latency: merge fio's json+ histograms of all jobs when present (exact pooled percentiles);
    # otherwise the worst job's own percentile (marked *).
    bins, have_bins = {}, True
    for j in jobs:
        b = j["read"].get("clat_ns", {}).get("bins")
        if not b:
            have_bins = False
            break
        for k, v in b.items():
            bins[int(k)] = bins.get(int(k), 0) + v
    lat = []
    for p in (50, 99, 99.9):
        if have_bins and bins:
            v = percentile_from_bins(bins, p)
            lat.append(f"{v / 1000:.0f}" if v is not None else "?")
        else:
            key = f"{p:.6f}"
            vals = [j["read"].get("clat_ns", {}).get("percentile", {}).get(key) for j in jobs]
            vals = [v for v in vals if v is not None]
            lat.append(f"{max(vals) / 1000:.0f}*" if vals else "?")
    return dict(iops=iops, bw=bw, by_name=by_name, lat=lat)

# runs[(workload, label)] = {round: result}; skips[(workload, label)] = the first reason.
runs, skips, labels, order = {}, {}, {}, []
for line in open(sys.argv[1]):
    rnd, wl, jobfile, label, files = line.rstrip("\n").split("\t")
    if wl not in labels:
        labels[wl] = []
        order.append((wl, jobfile))
    if label not in labels[wl]:
        labels[wl].append(label)
    key = (wl, label)
    runs.setdefault(key, {})
    if files.startswith("SKIP"):
        skips.setdefault(key, files)
    else:
        runs[key][int(rnd)] = run_result(files)

def median_ratio(num, den, field):
    """The median over the rounds both rows ran of num's field over den's, and the ratios."""
    ratios = [num[r][field] / den[r][field] for r in sorted(num) if r in den and den[r][field]]
    return (statistics.median(ratios), ratios) if ratios else (None, [])

def summary(by_round):
    """Median IOPS and MB/s, the median round's latencies, bytes per group over all rounds."""
    results = sorted(by_round.values(), key=lambda r: r["bw"])
    middle = results[(len(results) - 1) // 2]
    by_name = {}
    for r in results:
        for k, v in r["by_name"].items():
            by_name[k] = by_name.get(k, 0) + v
    return dict(iops=statistics.median(r["iops"] for r in results),
                bw=statistics.median(r["bw"] for r in results), lat=middle["lat"], by_name=by_name)

def rounds_note(ratios):
    return "" if len(ratios) < 2 else "; rounds " + " ".join(f"{100 * x:.0f}" for x in ratios) + "%"

out = []
targets = []
for wl, jobfile in order:
    weights = weights_of(jobfile)
    wsum = sum(weights.values())
    out.append(f"== {wl}  ({jobfile.rsplit('/', 1)[-1]})")
    if weights:
        out.append("   weight shares %: " + " ".join(f"{100 * w / wsum:4.1f}" for w in weights.values())
                   + "   (" + " ".join(f"{k}={w}" for k, w in weights.items()) + ")")
    head = f"   {'scheduler':<26}{'IOPS':>10}{'MB/s':>9}{'/k-none':>9}{'/i-noop':>9}{'p50 us':>9}{'p99 us':>9}{'p99.9 us':>10}"
    if weights:
        head += f"{'max dev':>9}  group shares % (g1..g8)"
    out.append(head)
    knone = runs.get((wl, "kernel none"), {})
    inoop = runs.get((wl, "ioslice noop"), {})
    for label in labels[wl]:
        mine = runs[(wl, label)]
        if not mine:
            out.append(f"   {label:<26}{skips[(wl, label)][len('SKIP: '):]}")
            continue
        r = summary(mine)
        rel_k, _ = median_ratio(mine, knone, "bw")
        rel_i, ratios_i = median_ratio(mine, inoop, "bw") if label.startswith("ioslice") else (None, [])
        line = (f"   {label:<26}{r['iops']:>10,.0f}{r['bw'] / 1e6:>9.1f}"
                f"{'-' if rel_k is None else f'{rel_k:.2f}':>9}{'-' if rel_i is None else f'{rel_i:.2f}':>9}"
                f"{r['lat'][0]:>9}{r['lat'][1]:>9}{r['lat'][2]:>10}")
        if weights:
            total = sum(r["by_name"].get(k, 0) for k in weights)
            shares = [r["by_name"].get(k, 0) / total if total else 0 for k in weights]
            devs = [100 * (s / (w / wsum) - 1) for s, w in zip(shares, weights.values())]
            worst = max(devs, key=abs)
            line += f"{worst:>+8.0f}%  " + " ".join(f"{100 * s:4.1f}" for s in shares)
            if label == "ioslice bfq":
                ok = abs(worst) <= 10 and rel_i is not None and rel_i >= 0.8
                targets.append(f"   {wl}: ioslice bfq shares within ±10% (max {worst:+.0f}%) and total >= 80% "
                               f"of ioslice noop ({100 * (rel_i or 0):.0f}%{rounds_note(ratios_i)}): "
                               + ("PASS" if ok else "FAIL"))
        out.append(line)
        if label == "ioslice noop" and knone and not weights:
            ratio, ratios = median_ratio(mine, knone, "iops")
            targets.append(f"   {wl}: ioslice noop IOPS within 10% of kernel none "
                           f"({100 * (ratio or 0):.0f}%{rounds_note(ratios)}): "
                           + ("PASS" if ratio is not None and ratio >= 0.9 else "FAIL"))
    out.append("")
n_rounds = max((len(v) for v in runs.values()), default=0)
out.append(f"Medians of {n_rounds} round(s). IOPS and MB/s are totals (MB = 10^6 bytes); /k-none and /i-noop")
out.append("are the median over the rounds of MB/s against kernel none and ioslice noop in the same round;")
out.append("latencies are completion latencies (fio clat) of the median round, pooled over all jobs (* = worst")
out.append("job's percentile); shares pool the bytes of all rounds, and max dev is the group share furthest")
out.append("from its weight share, relative to that weight share.")
if targets:
    out.append("")
    out.append("Targets:")
    out.extend(targets)
print("\n".join(out))
PY
}
{
    echo "kernel-compare: $(date -u '+%Y-%m-%d %H:%M UTC'), Linux $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) RAM"
    echo "device: $loop over a ${dev_mib} MiB file on tmpfs (loop dio=$loop_dio), ${runtime}s per run, $rounds round(s), cgroups: ${cg_mode:-none}"
    echo "idle vCPUs: $halt_poll_note"
    # Other work on the machine moves every figure: say how loaded it was (before and after the runs).
    echo "load average: $load_before at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo
    report
    if [[ -n $ioslice_reason ]]; then echo; echo "ioslice rows skipped: $ioslice_reason"; fi
} | tee "$out_dir/table.txt"
say "raw JSON and logs in $out_dir"
