#!/usr/bin/env bash
# Remake the report screenshots in docs/images/: the seed-003 comparison (sequential 4 KiB
# readers, 2 clients) with its three decision timelines zoomed to 10–11 s, the seed-000
# comparison (eight weighted cgroups under cfq), and a sweep's per-job and per-cgroup charts
# (two cgroups under bfq, a's weight × bs). Needs chromium and python3. Each picture is
# the page's own sections (the comparison, the timelines) cut out of the full report, so the
# picture stays readable; the full pages are left in $OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$(mktemp -d)}
cargo build --release --locked -q -p ioslice
bin=target/release/ioslice

"$bin" compare scenarios/seed-003/read-sequential-4k.fio --sched deadline,as,cfq \
    --device sim:ide-2004 --clients 2 --report "$OUT/seed003.html" >/dev/null
"$bin" compare scenarios/seed-000/eight-groups.fio --device sim:raid5-12 --clients 1,2,4,8 \
    --sched cfq:slice_idle=8,group_idle=8,group_isolation=1,cfq:slice_idle=0,group_idle=8,group_isolation=1 \
    --report "$OUT/seed000.html" >/dev/null

cat > "$OUT/two-groups.fio" <<'FIO'
[global]
ioengine=libaio
rw=randread
bs=4k
size=64m
direct=1
iodepth=4
runtime=500ms
time_based
[a]
cgroup=a
[b]
cgroup=b
FIO
rm -rf "$OUT/sweep"
"$bin" sweep "$OUT/two-groups.fio" --device sim:ssd --sched bfq --axis cgroup.a.weight=100,300,900 \
    --axis bs=4k,64k --seeds 2 --out "$OUT/sweep" >/dev/null

python3 - "$OUT" <<'PY'
import sys
out = sys.argv[1]

def cut(name, title, timelines):
    page = open(f"{out}/{name}.html").read()
    head = page[:page.index("<body>") + 6]
    start = page.index('<section class="comparison" id="comparison-0"')
    end = page.index('<section class="run" id="run-0"')
    parts = [head, f"<h1>{title}</h1>", page[start:end]]
    for index, label in enumerate(timelines):
        begin = page.index(f'<section id="tl-{index}"')
        close = page.index("</section>", begin) + len("</section>")
        rest = page[close:close + 200].lstrip()
        if rest.startswith("<script"):
            close = page.index("</script>", close) + len("</script>")
        parts.append(f"<h3>Decision timeline: {label}</h3>" + page[begin:close])
    parts.append("</body></html>")
    open(f"{out}/{name}-parts.html", "w").write("\n".join(parts))

cut("seed003", "ioslice report: seed 003, sequential 4 KiB readers, 2 clients",
    ["deadline, 10.0–11.0 s", "anticipatory, 10.0–11.0 s", "cfq, 10.0–11.0 s"])
cut("seed000", "ioslice report: seed 000, eight weighted cgroups of buffered readers under cfq", [])

page = open(f"{out}/sweep/report.html").read()
head = page[:page.index("<body>") + 6]
section = page[page.index("<h2>Bandwidth per job"):page.index("<h2>Points")]
open(f"{out}/sweep-parts.html", "w").write(
    head + "<h1>ioslice sweep: two cgroups under bfq, a's weight × bs</h1>" + section + "</body></html>")
PY

shot() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --screenshot="$1" --window-size="$2" "$3" >/dev/null 2>&1
}
shot docs/images/report-seed003.png 1100,1500 \
    "file://$OUT/seed003-parts.html#tl-0=10-11&tl-1=10-11&tl-2=10-11"
shot docs/images/report-seed000.png 1100,1400 "file://$OUT/seed000-parts.html"
shot docs/images/sweep-cgroup-shares.png 1100,1050 "file://$OUT/sweep-parts.html"
echo "docs/images/report-seed003.png docs/images/report-seed000.png docs/images/sweep-cgroup-shares.png (pages in $OUT)"
