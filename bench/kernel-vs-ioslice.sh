#!/usr/bin/env bash
# bench/kernel-vs-ioslice.sh — the kernel's elevators and ioslice's policies on the same disk model.
#
# For each row of a matrix of job files, runs fio under the kernel's bfq, mq-deadline, none and
# kyber on a loop device over `ioslice emulate --device PRESET`, a fresh emulator for every kernel
# run so that no run finds a cache another filled (the jobs of each `cgroup=` in one fio process inside a
# real cgroup of that weight, each job with a random seed of its own: bench/lib/kernel-runs.sh), and
# ioslice's simulator on the same preset under bfq, mq-deadline, noop and kyber, with the same
# arrangement (`--host driver_queue=128,block_layer=blk-mq`: the loop device's deep queue in
# front of the model's own, and today's block layer whatever the policy). Then one
# table: per row, each kernel elevator beside its ioslice counterpart, with per-job bandwidth,
# per-group share, total, pooled p99 completion latency, and a verdict: the shares in the same
# order, each within ±10 % of the kernel's, and the total within ±15 %.
#
# Usage: sudo bench/kernel-vs-ioslice.sh [--runtime SECONDS] [--rows REGEX] [--ioslice PATH] [--out DIR]
#   --runtime  seconds per run (default 20; KV_RUNTIME in the job files)
#   --rows     only the rows whose name matches REGEX (the names: seq-G-groups-qdD, and the job
#              files in bench/kernel-vs-ioslice/ without .fio)
#   --ioslice  the ioslice binary (default target/release/ioslice, built if missing)
#   --pairs    which elevators, as KERNEL=IOSLICE pairs separated by commas, or by ';' when a
#              side carries tunables (the kernel's are written to its iosched/ files after the
#              elevator is chosen; each run chooses the elevator afresh, so they never outlive
#              it). Default: 'bfq=bfq;bfq:low_latency=0=bfq:low_latency=0;mq-deadline=mq-deadline;none=noop;kyber=kyber'
#              (a pair whose ioslice side fails to run, such as a policy ioslice does not have,
#              still shows the kernel's figures, with ioslice's error beside them)
#   --ktrace   with each kernel run, record the device's block trace (ftrace's `blk` tracer)
#              into PREFIX.ktrace.txt beside the run's JSON: every request, and the kernel's
#              bfq messages (`m` lines: expirations, budgets, weight raising, injection), to
#              read beside `ioslice run --trace` (needs tracefs; 256 MiB of ring per CPU)
#   --repeat   run each kernel row N times (default 1): the emulated disk's timing varies from
#              run to run, and the table then shows the median of each job's bandwidth with the
#              range of the totals; runs that would not agree with each other are the kernel's
#              modes, each shown with its share of the runs, and ioslice is judged against each
#   --out      where the raw JSON, the generated job files and the table are kept (default
#              /tmp/kernel-vs-ioslice.DATE); `bench/lib/kernel-vs-ioslice-report.py DIR/manifest.tsv
#              RUNTIME` prints the table again from them
#
# The rows: weighted sequential readers (64 KiB, O_DIRECT) in 2, 4 and 8 cgroups at queue depth
# 1, 4 and 16 on sim:sata-7200 (weights 100:500; 100/300/600/1000; 100 to 800), and every job
# file in bench/kernel-vs-ioslice/, whose first line names its device (`; device: sim:...`):
# among them several readers per weighted group, random against sequential groups of equal
# weight, an idle-class reader, a writer beside prioritised readers, and eight readers at
# depth 2 on the array; random reads beside a deep writer on sim:ssd (where kyber's read
# target throttles the writes); and groups held to limits (`; limit: GROUP rbps=N,...` lines, written to
# blk-throttle's blkio.throttle.* or io.max files for the kernel, and given to ioslice as
# `--cgroup GROUP:...,throttle=above`), alone and beside unlimited groups.
# Needs root, /dev/fuse, fio, losetup and python3; without them it says why and exits 0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo_root=$(cd "$here/.." && pwd)
runtime=20
rows_regex=.
ioslice_bin=$repo_root/target/release/ioslice
out_dir=""
pairs='bfq=bfq;bfq:low_latency=0=bfq:low_latency=0;mq-deadline=mq-deadline;none=noop;kyber=kyber'
ktrace=0
repeat=1
tracefs=/sys/kernel/tracing

say() { printf 'kernel-vs-ioslice: %s\n' "$*" >&2; }
# shellcheck source=lib/kernel-runs.sh
source "$here/lib/kernel-runs.sh"

while (($#)); do
    case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --rows) rows_regex=$2; shift 2 ;;
    --ioslice) ioslice_bin=$2; shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --pairs) pairs=$2; shift 2 ;;
    --ktrace) ktrace=1; shift ;;
    --repeat) repeat=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) say "unknown argument '$1' (see --help)"; exit 2 ;;
    esac
done
if ! [[ $runtime =~ ^[1-9][0-9]*$ ]]; then say "--runtime wants whole seconds, got '$runtime'"; exit 2; fi
if ! [[ $repeat =~ ^[1-9][0-9]?$ ]]; then say "--repeat wants 1 to 99 runs, got '$repeat'"; exit 2; fi
kernel_scheds=()
ioslice_scheds=()
parsed_pairs=$(kr_parse_pairs "$pairs") || exit 2
while IFS=$'\t' read -r kernel_side ioslice_side; do
    kernel_scheds+=("$kernel_side")
    ioslice_scheds+=("$ioslice_side")
done <<<"$parsed_pairs"

if ((EUID != 0)); then echo "kernel-vs-ioslice: needs root (FUSE mounts, loop devices, cgroups; skipping)"; exit 0; fi
for tool in fio losetup python3; do
    command -v "$tool" >/dev/null || { echo "kernel-vs-ioslice: needs $tool (skipping)"; exit 0; }
done
[[ -c /dev/fuse ]] || { echo "kernel-vs-ioslice: needs /dev/fuse (skipping)"; exit 0; }
if ((ktrace)); then
    mountpoint -q "$tracefs" || mount -t tracefs none "$tracefs"
    grep -qw blk "$tracefs/available_tracers" || { say "--ktrace: this kernel has no blk tracer"; exit 2; }
fi
# The kernel's block trace of one run: start_ktrace before it, stop_ktrace [FILE] after (and
# from the clean-up, without a file, if a run ended in between). The ring's size reads as
# "7 (expanded: 1408)" before tracing first expanded it: the number to restore is the first.
ktrace_on=0
start_ktrace() {
    ktrace_buffer_kb=$(sed -n '1s/^\([0-9]*\).*/\1/p' "$tracefs/buffer_size_kb")
    ktrace_on=1
    echo 0 >"$tracefs/tracing_on"
    echo 262144 >"$tracefs/buffer_size_kb"
    echo blk >"$tracefs/current_tracer"
    echo >"$tracefs/trace"
    echo 1 >"/sys/block/$(basename "$loop")/trace/enable"
    echo 1 >"$tracefs/tracing_on"
}
stop_ktrace() {
    ((ktrace_on)) || return 0
    ktrace_on=0
    echo 0 >"$tracefs/tracing_on" || say "--ktrace: could not stop tracing"
    [[ -n ${1:-} ]] && { cp "$tracefs/trace" "$1" || say "--ktrace: could not keep the trace in $1"; }
    [[ -n $loop ]] && { echo 0 >"/sys/block/$(basename "$loop")/trace/enable" || say "--ktrace: could not disable $loop's trace"; }
    echo nop >"$tracefs/current_tracer" || say "--ktrace: could not restore the nop tracer"
    if [[ -n $ktrace_buffer_kb ]]; then
        echo "$ktrace_buffer_kb" >"$tracefs/buffer_size_kb" || say "--ktrace: could not restore buffer_size_kb ($ktrace_buffer_kb)"
    fi
    return 0
}
[[ -x $ioslice_bin ]] || (cd "$repo_root" && cargo build --release --locked -p ioslice >&2)

out_dir=${out_dir:-/tmp/kernel-vs-ioslice.$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)

work=""; loop=""; emulator=""; mnt=""; emulator_log=""
stop_emulator() {
    if [[ -n $loop ]]; then losetup -d "$loop" || say "could not detach $loop"; loop=""; fi
    if [[ -n $emulator ]]; then
        kill -INT "$emulator" 2>/dev/null
        wait "$emulator" || say "the emulator exited with an error (see $emulator_log.err)"
        emulator=""
    fi
    if [[ -n $mnt ]] && mountpoint -q "$mnt"; then umount -l "$mnt"; fi
}
cleanup() {
    local rc=$?
    set +e
    kr_kill_children
    stop_ktrace
    stop_emulator
    if [[ -n $mnt ]] && mountpoint -q "$mnt"; then umount -l "$mnt"; fi
    [[ -n $work ]] && rm -rf "$work"
    kr_cgroups_cleanup
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

work=$(mktemp -d /tmp/kernel-vs-ioslice.XXXXXX)
kr_work=$work
kr_cgroups_init

# --- The matrix: generated weighted-reader rows, then the job files. ------------------------------
# seq-G-groups-qdD: one sequential 64 KiB O_DIRECT reader per group, each in a 100 GiB region.
weights_for() {
    case $1 in
    2) echo "100 500" ;;
    4) echo "100 300 600 1000" ;;
    8) echo "100 200 300 400 500 600 700 800" ;;
    esac
}
write_weighted_row() {
    local groups=$1 depth=$2 file=$3 engine=libaio i=0 w
    ((depth == 1)) && engine=psync
    {
        echo "; device: sim:sata-7200"
        printf '[global]\nfilename=${KV_DEVICE}\ndirect=1\nioengine=%s\niodepth=%s\nrw=read\nbs=64k\nsize=100g\nruntime=${KV_RUNTIME}\ntime_based\n' "$engine" "$depth"
        for w in $(weights_for "$groups"); do
            i=$((i + 1))
            printf '[g%s]\ncgroup=g%s\ncgroup_weight=%s\noffset=%sg\n' "$i" "$i" "$w" "$(((i - 1) * 110))"
        done
    } >"$file"
}
rows=()
mkdir -p "$out_dir/jobs"
for groups in 2 4 8; do
    for depth in 1 4 16; do
        name=seq-$groups-groups-qd$depth
        write_weighted_row "$groups" "$depth" "$out_dir/jobs/$name.fio"
        rows+=("$name:$out_dir/jobs/$name.fio")
    done
done
for file in "$here"/kernel-vs-ioslice/*.fio; do
    rows+=("$(basename "$file" .fio):$file")
done

# --- Runs: a fresh emulated device for every kernel run. ------------------------------------------
manifest="$out_dir/manifest.tsv"
: >"$manifest"
# Serve `device` from a new emulator, its summary (with how late it answered) in LOG.out and its
# messages in LOG.err, as the loop device $loop.
start_emulator() {
    local device=$1 name
    emulator_log=$2
    stop_emulator
    mnt="$work/mnt"
    mkdir -p "$mnt"
    "$ioslice_bin" emulate "$mnt" --device "$device" >"$emulator_log.out" 2>"$emulator_log.err" &
    emulator=$!
    for _ in $(seq 100); do [[ -e $mnt/disk ]] && break; sleep 0.1; done
    [[ -e $mnt/disk ]] || { say "the emulator did not start: $(tail -n 1 "$emulator_log.err")"; exit 1; }
    loop=$(losetup --direct-io=on --find --show "$mnt/disk")
    name=$(basename "$loop")
    # The model's rotational flag, as a real disk's driver would set it.
    case $device in sim:ssd* | sim:null*) echo 0 >"/sys/block/$name/queue/rotational" ;; *) echo 1 >"/sys/block/$name/queue/rotational" ;; esac
}

# The JSON files of one kernel run (one per cgroup when the job has groups).
run_files() {
    local file out=""
    for file in "$1.json" "$1".*.json; do [[ -e $file ]] && out+="$file "; done
    printf '%s' "$out"
}

for row in "${rows[@]}"; do
    name=${row%%:*}
    job=${row#*:}
    [[ $name =~ $rows_regex ]] || continue
    device=$(sed -n '1s/^; device: //p' "$job")
    [[ $device == sim:* ]] || { say "$job: first line must be '; device: sim:PRESET'"; exit 2; }
    # The groups' limits, for ioslice as blk-throttle holds them: above the elevator.
    limit_args=()
    while IFS=$'\t' read -r group limits; do
        limit_args+=(--cgroup "$group:$limits,throttle=above")
    done < <(kr_job_limits "$job")
    for i in "${!kernel_scheds[@]}"; do
        ksched=${kernel_scheds[$i]}
        isched=${ioslice_scheds[$i]}
        kfiles=""
        emulated=""
        processes=""
        for ((run = 1; run <= repeat; run++)); do
            # One run's files; repeated runs are separated by ';' in the manifest.
            prefix="$out_dir/$name.kernel-$ksched"
            ((repeat > 1)) && prefix="$prefix.run$run"
            label="${runtime}s"
            ((repeat > 1)) && label+=", run $run of $repeat"
            say "$name: kernel $ksched on $device ($label)"
            start_emulator "$device" "$prefix.emulate"
            sysq="/sys/block/$(basename "$loop")/queue"
            kr_set_kernel_sched "$sysq" "$ksched" || exit 1
            ((ktrace)) && start_ktrace
            if KV_DEVICE=$loop KV_RUNTIME=$runtime kr_run_fio "$job" "$prefix"; then
                kfiles+="${kfiles:+;}$(run_files "$prefix")"
            else
                kfiles="SKIP: fio failed, see $prefix*.log"
            fi
            stop_ktrace "$prefix.ktrace.txt"
            stop_emulator
            emulated+="${emulated:+;}$prefix.emulate.out"
            processes+="${processes:+;}$prefix.processes.tsv"
            [[ $kfiles == SKIP* ]] && break
        done
        iprefix="$out_dir/$name.ioslice-$isched"
        if KV_DEVICE=/dev/emulated KV_RUNTIME=$runtime "$ioslice_bin" run "$job" --device "$device" \
            --host driver_queue=128,block_layer=blk-mq --sched "$isched" "${limit_args[@]}" \
            --output-format json >"$iprefix.json" 2>"$iprefix.log"; then
            ifiles=$iprefix.json
        else
            ifiles="SKIP: ioslice failed: $(tail -n 1 "$iprefix.log")"
        fi
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$job" "$device" "$ksched" "$kfiles" "$isched" "$ifiles" \
            "$emulated" "$processes" >>"$manifest"
    done
done

python3 "$here/lib/kernel-vs-ioslice-report.py" "$manifest" "$runtime" | tee "$out_dir/table.txt"
say "raw JSON and logs in $out_dir"
