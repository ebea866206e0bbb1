#!/usr/bin/env bash
# The IOSpeed test (Algodev's script for BFQ: 8 threads of random 4 KiB I/O on a device with
# no latency, the highest IOPS the CPU sustains under each scheduler), on both of ioslice's
# drivers, with the statistics kept and not, side by side in one run of each:
#
#   1. the engine on its in-memory backend (`crates/engine/examples/iospeed.rs`): IOPS and
#      IOPS per core under noop, mq-deadline and bfq, `Statistics::Detailed` against
#      `Statistics::Totals`;
#   2. the simulator on `sim:null` (`crates/sim/benches/iospeed.rs`): simulated requests per
#      second under noop, deadline and bfq, every job's statistics against totals only.
#
#     bench/iospeed.sh [ENGINE-ARGUMENTS...]
#     bench/iospeed.sh --rounds 7 --seconds 1 --groups 8
#
# ENGINE-ARGUMENTS go to the engine's example (its options are in its doc comment);
# IOSPEED_ROUNDS sets the simulator's rounds. Compare ratios, not absolute figures, on a
# shared machine.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

echo "== engine, in-memory backend"
cargo run --quiet --release -p ioslice-engine --example iospeed -- "$@"
echo
echo "== simulator, sim:null"
cargo bench --quiet -p ioslice-sim --bench iospeed
