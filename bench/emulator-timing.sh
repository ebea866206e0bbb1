#!/usr/bin/env bash
# The emulator's timing against the simulator's: the same fio jobs (4 KiB random reads and
# 64 KiB sequential reads at queue depth 1, O_DIRECT) run by fio on a loop device over
# `ioslice emulate --device DEVICE` and by `ioslice run` on the simulator with the same
# device, side by side. Needs root, /dev/fuse, losetup and fio; says why and exits 0 without.
#
#   sudo bench/emulator-timing.sh [--device sim:sata-7200] [--runtime 30] [--ioslice PATH]
#
# The simulated job covers as much of the device as the emulated one (the whole disk; a
# smaller `size=` where the simulator's file layout needs room, with --size).
set -euo pipefail
cd "$(dirname "$0")/.."

device=sim:sata-7200
runtime=30
size=
ioslice=target/release/ioslice
while [ $# -gt 0 ]; do
    case "$1" in
        --device) device=$2; shift 2 ;;
        --runtime) runtime=$2; shift 2 ;;
        --size) size=$2; shift 2 ;;
        --ioslice) ioslice=$2; shift 2 ;;
        *) echo "emulator-timing: unknown option '$1' (expected --device, --runtime, --size, --ioslice)" >&2; exit 2 ;;
    esac
done
case "$runtime" in ''|*[!0-9]*) echo "emulator-timing: --runtime '$runtime': expected whole seconds" >&2; exit 2 ;; esac

if [ "$(id -u)" -ne 0 ]; then echo "emulator-timing: needs root (FUSE mount and losetup); skipped"; exit 0; fi
for tool in fio losetup python3; do
    command -v "$tool" >/dev/null || { echo "emulator-timing: needs $tool; skipped"; exit 0; }
done
[ -c /dev/fuse ] || { echo "emulator-timing: needs /dev/fuse; skipped"; exit 0; }
[ -x "$ioslice" ] || cargo build --release --locked -p ioslice >&2

work=$(mktemp -d)
mnt="$work/mnt"; mkdir "$mnt"
emulator=; loopdev=
cleanup() {
    [ -n "$loopdev" ] && losetup -d "$loopdev" 2>/dev/null || true
    if [ -n "$emulator" ]; then kill -INT "$emulator" 2>/dev/null || true; wait "$emulator" 2>/dev/null || true; fi
    mountpoint -q "$mnt" && umount -l "$mnt" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

"$ioslice" emulate "$mnt" --device "$device" > "$work/summary" 2> "$work/emulate.err" &
emulator=$!
for _ in $(seq 100); do [ -e "$mnt/disk" ] && break; sleep 0.1; done
[ -e "$mnt/disk" ] || { cat "$work/emulate.err" >&2; exit 1; }
loopdev=$(losetup --direct-io=on --find --show "$mnt/disk")
echo none > "/sys/block/$(basename "$loopdev")/queue/scheduler"
capacity=$(blockdev --getsize64 "$loopdev")
[ -n "$size" ] || size=$((capacity / 1024 / 1024 / 1024))g

metric() {
    python3 -c '
import json, sys
job = json.load(sys.stdin)["jobs"][0]["read"]
print("%.4f %.1f" % (job["bw_bytes"] / 1e6, job["clat_ns"]["mean"] / 1e3))'
}

printf "%-28s %22s %22s %8s\n" "$device, queue depth 1" "emulated MB/s (µs)" "simulated MB/s (µs)" "ratio"
for job in "randread 4k" "read 64k"; do
    set -- $job
    body="direct=1\nioengine=psync\nruntime=$runtime\ntime_based\n[j]\nrw=$1\nbs=$2\n"
    printf "[global]\nfilename=$loopdev\n$body" > "$work/loop.fio"
    printf "[global]\nsize=$size\n$body" > "$work/sim.fio"
    read -r emu_bw emu_lat < <(fio --output-format=json "$work/loop.fio" | metric)
    read -r sim_bw sim_lat < <("$ioslice" run "$work/sim.fio" --device "$device" --sched noop --output-format json | metric)
    ratio=$(python3 -c "print('%.3f' % ($emu_bw / $sim_bw))")
    printf "%-28s %13.2f (%6s) %13.2f (%6s) %8s\n" "$1 $2" "$emu_bw" "$emu_lat" "$sim_bw" "$sim_lat" "$ratio"
done
losetup -d "$loopdev"; loopdev=
kill -INT "$emulator"; wait "$emulator" || true; emulator=
echo "emulator: $(cat "$work/summary")"
