#!/usr/bin/env bash
# Depth-1 overhead on a real file: one psync job of 4 KiB random reads, one request in flight,
# on a file in tmpfs, through `ioslice run --device FILE` and through fio on the same file and
# job, alternated round by round (so load from elsewhere moves both alike). Prints each
# round's IOPS and ratio, then the median ratio ioslice / fio.
#
#     bench/depth1-tmpfs.sh [ROUNDS [SECONDS [DIR]]]     # default 7 rounds of 2 s in /dev/shm
#
# Needs fio. IOSLICE sets the binary (default target/release/ioslice, built here).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
rounds=${1:-7}
seconds=${2:-2}
dir=${3:-/dev/shm}
command -v fio >/dev/null || { echo "depth1-tmpfs: needs fio" >&2; exit 2; }
if [ -z "${IOSLICE:-}" ]; then
    cargo build --quiet --release -p ioslice
    IOSLICE=target/release/ioslice
fi
work=$(mktemp -d "$dir/ioslice-depth1.XXXXXX")
trap 'rm -rf "$work"' EXIT
cat >"$work/job.fio" <<JOB
[global]
filename=$work/file
size=256m
bs=4k
rw=randread
ioengine=psync
iodepth=1
runtime=$seconds
time_based=1
[depth1]
JOB
# Lay the file out once, with fio, so both read the same cached pages.
fio --output-format=terse --runtime=1 "$work/job.fio" >/dev/null

iops() { cut -d';' -f8; } # terse v3: read IOPS
ratios=()
printf '%-6s %12s %12s %8s\n' round fio ioslice ratio
for round in $(seq 1 "$rounds"); do
    if (( round % 2 )); then
        f=$(fio --output-format=terse "$work/job.fio" | iops)
        i=$("$IOSLICE" run --minimal --device "$work/file" "$work/job.fio" | iops)
    else
        i=$("$IOSLICE" run --minimal --device "$work/file" "$work/job.fio" | iops)
        f=$(fio --output-format=terse "$work/job.fio" | iops)
    fi
    r=$(echo "$i / $f" | bc -l)
    ratios+=("$r")
    printf '%-6s %12s %12s %8.3f\n' "$round" "$f" "$i" "$r"
done
printf '%s\n' "${ratios[@]}" | sort -g | awk '{a[NR]=$1} END {printf "median ioslice / fio: %.3f\n", a[int((NR+1)/2)]}'
