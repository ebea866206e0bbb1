#!/usr/bin/env bash
# The HTML report's cost: the record and page of a 30 s, 4-job simulated run (two
# sequential and two random O_DIRECT readers under cfq on sim:sata-7200, with the bandwidth
# and timeline recorders on the trace), built and rendered five times; prints the best
# time, the page's size, its charts and the bandwidth windows. The page must stay under
# 5 MB and take under a second.
#
#   bench/report-size.sh [OUT.html]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/report-size.html}
cargo run --quiet --release -p ioslice-report --example report_size -- "$out"
echo "page written to $out"
