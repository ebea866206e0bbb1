#!/usr/bin/env bash
# Side-by-side run time of `ioslice run` at two versions of the tree: BASE (a git revision)
# against the working tree, on the same job, alternating A and B so that load that comes and
# goes on a shared machine moves both alike. Prints each side's median wall time and the
# median of the per-round ratios B/A.
#
#     bench/ab-run.sh BASE ROUNDS -- RUN-ARGUMENTS...
#     bench/ab-run.sh HEAD 15 -- bench/ab-run/random-readers.fio --sched bfq --device sim:null
#
# RUN-ARGUMENTS go to `ioslice run` on both sides (the job file is read from the working
# tree). Both binaries are release builds; BASE is built in a worktree under target/ab-run.
set -euo pipefail

if [[ $# -lt 3 || $3 != "--" ]]; then
    echo "usage: $0 BASE ROUNDS -- RUN-ARGUMENTS..." >&2
    exit 2
fi
base=$1
rounds=$2
shift 3
root=$(git rev-parse --show-toplevel)
cd "$root"

worktree=$root/target/ab-run/tree
rev=$(git rev-parse --verify "$base^{commit}")
if [[ -d $worktree ]]; then
    git -C "$worktree" checkout --quiet --detach "$rev"
else
    mkdir -p "$(dirname "$worktree")"
    git worktree add --quiet --detach "$worktree" "$rev"
fi
echo "building A = $base ($rev) and B = the working tree" >&2
cargo build --quiet --release -p ioslice --manifest-path "$worktree/Cargo.toml" \
    --target-dir "$root/target/ab-run/target"
cargo build --quiet --release -p ioslice
a=$root/target/ab-run/target/release/ioslice
b=$root/target/release/ioslice

elapsed() { # prints the wall time of one run in nanoseconds
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null
    end=$(date +%s%N)
    echo $((end - start))
}

"$a" run "$@" >/dev/null # warm the page cache and check both run
"$b" run "$@" >/dev/null
times_a=()
times_b=()
for ((i = 0; i < rounds; i++)); do
    if ((i % 2 == 0)); then
        times_a+=("$(elapsed "$a" run "$@")")
        times_b+=("$(elapsed "$b" run "$@")")
    else
        times_b+=("$(elapsed "$b" run "$@")")
        times_a+=("$(elapsed "$a" run "$@")")
    fi
done

python3 - "${times_a[*]}" "${times_b[*]}" "$base" <<'EOF'
import statistics, sys
a = [int(x) for x in sys.argv[1].split()]
b = [int(x) for x in sys.argv[2].split()]
ratios = sorted(y / x for x, y in zip(a, b))
print(f"A ({sys.argv[3]}): median {statistics.median(a) / 1e6:.1f} ms")
print(f"B (working tree): median {statistics.median(b) / 1e6:.1f} ms")
print(f"B/A per round: median {statistics.median(ratios):.3f}, "
      f"range {ratios[0]:.3f}-{ratios[-1]:.3f}, {len(ratios)} rounds")
EOF
