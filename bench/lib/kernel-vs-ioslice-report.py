#!/usr/bin/env python3
"""The table of bench/kernel-vs-ioslice.sh: each kernel elevator beside its ioslice counterpart.

    kernel-vs-ioslice-report.py MANIFEST RUNTIME [--markdown]

Reads the manifest the script writes (row, job file, device, kernel elevator, its fio JSON files
with repeated runs separated by ';', ioslice policy, its JSON file, then each kernel run's emulator
summary and its processes file; tab-separated) and prints, per row, each pair's total bandwidth,
per-job shares, the worst job's p99 completion latency, the completion time of jobs that are not
time based, how late the emulator answered, and a verdict. A kernel elevator run several times
(`--repeat`) counts with the median of each job's bandwidth, and its line shows the range of its
totals. A pair agrees when ioslice's shares are in the kernel's order, each within ±10 % of the
kernel's (relative) or ±2 points, whichever is looser, and its total within ±15 % of the kernel's
median or inside the kernel's own range. Runs of one kernel elevator that would not agree with
each other by that same rule are its modes (the kernel's side of a row can depend on timing and
land in one of two behaviours; runs of which no two agree are a spread, not modes): each mode is shown with the runs in it, and ioslice is judged
against each; a pair that agrees with one mode says which, and with how many of the runs.
With three runs or more, each pair also says how often the kernel agrees with itself: each run
judged against the modes of the others, by the rule ioslice is held to. That is the ceiling the
oracle's own repeatability puts on any model of it.
"""

import json
import re
import statistics
import sys

SHARE_TOLERANCE = 0.10
SHARE_POINTS = 0.02
TOTAL_TOLERANCE = 0.15
LATE = re.compile(r"replies late by mean ([0-9.]+) µs, p99 ([0-9]+) µs")


def load(path):
    # fio may print a warning line before its JSON: start at the first brace.
    text = open(path).read()
    return json.loads(text[text.index("{"):])


def sections(jobfile):
    """Jobs in order, with their cgroup weight (None if unweighted): a section with numjobs=N
    (its own, or a [global] one before it) stands for N jobs, named SECTION.0 to SECTION.N-1
    (as run_result names fio's clones)."""
    found, section, clones, global_clones = [], None, {}, None
    global_group, global_weight = None, None
    for line in open(jobfile):
        line = line.strip()
        m = re.match(r"^\[(.+)\]$", line)
        if m:
            section = m.group(1).strip()
            if section != "global":
                found.append([section, global_weight, global_group])
                if global_clones is not None:
                    clones[section] = global_clones
            continue
        m = re.match(r"^cgroup_weight\s*=\s*(\d+)", line)
        if m and section == "global":
            global_weight = int(m.group(1))
        elif m and found and found[-1][0] == section:
            found[-1][1] = int(m.group(1))
        m = re.match(r"^cgroup\s*=\s*(\S+)", line)
        if m and section == "global":
            global_group = m.group(1)
        elif m and found and found[-1][0] == section:
            found[-1][2] = m.group(1)
        m = re.match(r"^numjobs\s*=\s*(\d+)", line)
        if m and section == "global":
            global_clones = int(m.group(1))
        elif m and section:
            clones[section] = int(m.group(1))
    jobs = []
    for name, weight, group in found:
        count = clones.get(name, 1)
        names = [name] if count == 1 else [f"{name}.{i}" for i in range(count)]
        jobs.extend([[job, weight, group] for job in names])
    return jobs


def layout(jobfile):
    """What a row's shares are taken over: its cgroups (each with its weight) when its jobs
    name any, as the kernel and ioslice schedule them, else its jobs. Returns the units, their
    weights, and the unit of each job."""
    jobs = sections(jobfile)
    if not any(group for _, _, group in jobs):
        return [n for n, _, _ in jobs], [w for _, w, _ in jobs], {n: n for n, _, _ in jobs}
    units, weights, unit_of = [], [], {}
    for name, weight, group in jobs:
        unit = group or "/"
        if unit not in units:
            units.append(unit)
            weights.append(weight)
        unit_of[name] = unit
    return units, weights, unit_of


def regroup(result, unit_of):
    """`result` with its bandwidths summed per unit."""
    rate = {}
    for name, value in result["rate"].items():
        unit = unit_of.get(name, name)
        rate[unit] = rate.get(unit, 0) + value
    return dict(result, rate=rate)


def run_result(files):
    """Bytes a second per job, the worst p99 completion latency (µs), runtimes of untimed jobs,
    and the total of each run: the median of each over the runs separated by ';'."""
    runs = [one_run(part) for part in files.split(";") if part.strip()]
    totals = [sum(run["rate"].values()) for run in runs]
    if len(runs) == 1:
        return dict(runs[0], totals=totals)
    names = sorted(set().union(*(run["rate"] for run in runs)))
    untimed = sorted(set().union(*(run["runtime_ms"] for run in runs)))
    return dict(
        rate={n: statistics.median(run["rate"].get(n, 0) for run in runs) for n in names},
        p99=statistics.median(run["p99"] for run in runs),
        runtime_ms={n: statistics.median(run["runtime_ms"].get(n, 0) for run in runs) for n in untimed},
        totals=totals,
    )


def one_run(files):
    """One run's figures, from its JSON files (one per cgroup when the job has groups)."""
    jobs = []
    for f in files.split():
        jobs.extend(load(f).get("jobs", []))
    rate, p99, runtime_ms = {}, 0.0, {}
    seen = {}
    clones = {}
    for j in jobs:
        clones[j["jobname"]] = clones.get(j["jobname"], 0) + 1
    for j in jobs:
        name = j["jobname"]
        if clones[name] > 1:
            # numjobs clones share a name: tell them apart by their order.
            index = seen.get(name, 0)
            seen[name] = index + 1
            name = f"{name}.{index}"
        rate[name] = rate.get(name, 0) + j["read"]["bw_bytes"] + j["write"]["bw_bytes"]
        for d in ("read", "write"):
            pct = j[d].get("clat_ns", {}).get("percentile", {})
            if j[d]["io_bytes"] and "99.000000" in pct:
                p99 = max(p99, pct["99.000000"] / 1000)
        runtime_ms[name] = j.get("job_runtime", 0)
    return dict(rate=rate, p99=p99, runtime_ms=runtime_ms)


def out_of_order(k_shares, m_shares):
    """Whether two jobs whose kernel shares differ by more than the tolerance come out the
    other way round (shares within the tolerance of each other have no order to keep)."""
    for i, (ki, mi) in enumerate(zip(k_shares, m_shares)):
        for kj, mj in zip(k_shares[i + 1:], m_shares[i + 1:]):
            if ki > kj * (1 + SHARE_TOLERANCE) and mi < mj:
                return True
            if kj > ki * (1 + SHARE_TOLERANCE) and mj < mi:
                return True
    return False


def verdict(kernel, mine, names):
    k_total = sum(kernel["rate"].get(n, 0) for n in names)
    m_total = sum(mine["rate"].get(n, 0) for n in names)
    if not k_total or not m_total:
        return "no data", []
    k_shares = [kernel["rate"].get(n, 0) / k_total for n in names]
    m_shares = [mine["rate"].get(n, 0) / m_total for n in names]
    problems = []
    if len(names) > 1 and out_of_order(k_shares, m_shares):
        problems.append("share order")
    if len(names) > 1:
        off = [(abs(m - k), max(SHARE_TOLERANCE * k, SHARE_POINTS)) for m, k in zip(m_shares, k_shares)]
        if any(gap > allowed for gap, allowed in off):
            worst = max(gap for gap, _ in off)
            problems.append(f"shares off by up to {100 * worst:.1f} points")
    totals = kernel.get("totals") or [k_total]
    total = m_total / statistics.median(totals) - 1
    inside = min(totals) <= m_total <= max(totals)
    if abs(total) > TOTAL_TOLERANCE and not inside:
        problems.append(f"total {100 * total:+.0f}%")
    return ("agrees" if not problems else "DIFFERS: " + ", ".join(problems)), m_shares


def same_mode(a, b, names):
    """Whether two runs of one elevator would agree with each other as a pair does."""
    return verdict(a, b, names)[0] == "agrees" or verdict(b, a, names)[0] == "agrees"


def kernel_modes(kfiles, unit_of, names):
    """The kernel's runs of one elevator as modes: runs joined when they would agree with each
    other (and through each other), each mode the median of its runs, with how many runs it
    holds; the most frequent first. Where all runs join, or none do (a spread rather than
    modes), the one mode is the whole set of runs."""
    parts = [part for part in kfiles.split(";") if part.strip()]
    whole = [(regroup(run_result(kfiles), unit_of), len(parts))]
    if len(parts) < 2:
        return whole
    singles = [regroup(run_result(part), unit_of) for part in parts]
    parent = list(range(len(parts)))

    def find(i):
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(parts)):
        for j in range(i + 1, len(parts)):
            if same_mode(singles[i], singles[j], names):
                parent[find(j)] = find(i)
    groups = {}
    for i in range(len(parts)):
        groups.setdefault(find(i), []).append(i)
    if len(groups) == 1 or len(groups) == len(parts):
        # One mode, or no two runs alike: a spread, judged by its median and range.
        return whole
    modes = [(regroup(run_result(";".join(parts[i] for i in members)), unit_of), len(members))
             for members in groups.values()]
    return sorted(modes, key=lambda mode: -mode[1])


def judge(modes, mine, names):
    """The verdict on ioslice against the kernel's modes, and the mode it is measured against:
    the only one, or the one it agrees with (saying in how many of the runs the kernel was in
    it), else the most frequent."""
    if len(modes) == 1:
        return verdict(modes[0][0], mine, names)[0], modes[0][0]
    runs = sum(count for _, count in modes)
    for mode, count in modes:
        if verdict(mode, mine, names)[0] == "agrees":
            return f"agrees with the mode of {count} of {runs} runs", mode
    said = verdict(modes[0][0], mine, names)[0].removeprefix("DIFFERS: ")
    return "DIFFERS from every mode: " + said, modes[0][0]


def self_agreement(kfiles, unit_of, names):
    """How often the kernel agrees with itself by the rule ioslice is held to: each run judged,
    as ioslice is, against the modes of the other runs. Returns (runs that agree, runs); (0, 0)
    with fewer than three runs, where leaving one out leaves no modes to judge against."""
    parts = [part for part in kfiles.split(";") if part.strip()]
    if len(parts) < 3:
        return 0, 0
    agreeing = 0
    for left_out, part in enumerate(parts):
        others = ";".join(p for i, p in enumerate(parts) if i != left_out)
        said, _ = judge(kernel_modes(others, unit_of, names), regroup(run_result(part), unit_of), names)
        agreeing += said.startswith("agrees")
    return agreeing, len(parts)


def lateness(files):
    """How late the emulator answered in a row's kernel runs: the worst p99 over them, in µs
    (None when no summary was kept)."""
    worst = None
    for path in files.split(";"):
        path = path.strip()
        if not path:
            continue
        try:
            found = LATE.search(open(path).read())
        except OSError:
            continue
        if found:
            worst = max(worst or 0, int(found.group(2)))
    return worst


def run_total(result, names):
    """A result's total: the median of its runs' totals (the per-job medians need not add up
    to a total any run had)."""
    totals = result.get("totals") or []
    if len(totals) > 1:
        return statistics.median(totals)
    return sum(result["rate"].get(n, 0) for n in names)


def describe(label, result, names, weights):
    total = run_total(result, names)
    job_sum = sum(result["rate"].get(n, 0) for n in names)
    shares = " ".join(f"{100 * result['rate'].get(n, 0) / job_sum:5.1f}" if job_sum else "    -" for n in names)
    untimed = [f"{n} done in {result['runtime_ms'][n] / 1000:.2f}s" for n in names
               if n in result["runtime_ms"] and result["runtime_ms"][n] and n in UNTIMED]
    extra = ("; " + ", ".join(untimed)) if untimed else ""
    totals = result.get("totals", [])
    if len(totals) > 1:
        extra += f"; {len(totals)} runs, {min(totals) / 1e6:.1f}–{max(totals) / 1e6:.1f} MB/s"
    return f"   {label:<20}{total / 1e6:>9.1f}{result['p99']:>10.0f}   {shares}{extra}"


UNTIMED = set()


def markdown(rows, order):
    """One line per pair: the figures docs/fidelity.md shows."""
    out = ["| row | kernel / ioslice | kernel MB/s | ioslice MB/s | total | worst share (points) | kernel vs itself | verdict |",
           "|---|---|---|---|---|---|---|---|"]
    for name in order:
        row = rows[name]
        names, _, unit_of = layout(row["job"])
        for ksched, kfiles, isched, ifiles in row["pairs"]:
            if kfiles.startswith("SKIP") or ifiles.startswith("SKIP"):
                continue
            modes = kernel_modes(kfiles, unit_of, names)
            mine = regroup(run_result(ifiles), unit_of)
            said, kernel = judge(modes, mine, names)
            k_total = sum(kernel["rate"].get(n, 0) for n in names)
            m_total = sum(mine["rate"].get(n, 0) for n in names)
            worst = 0.0
            if len(names) > 1 and k_total and m_total:
                # In share points: a relative figure means nothing where the kernel gave ~0.
                worst = max(abs(mine["rate"].get(n, 0) / m_total - kernel["rate"].get(n, 0) / k_total)
                            for n in names)
            total = f"{100 * (m_total / run_total(kernel, names) - 1):+.0f} %" if k_total else "-"
            share = f"{100 * worst:.1f}" if len(names) > 1 else "-"
            runs = sum(count for _, count in modes)
            figures = []
            for mode, count in modes:
                figure = f"{run_total(mode, names) / 1e6:.1f}"
                if len(mode["totals"]) > 1:
                    figure += f" ({min(mode['totals']) / 1e6:.1f}–{max(mode['totals']) / 1e6:.1f})"
                if len(modes) > 1:
                    figure += f" in {count} of {runs} runs"
                figures.append(figure)
            short = "differs" if said.startswith("DIFFERS") else said
            agreeing, judged = self_agreement(kfiles, unit_of, names)
            itself = f"{agreeing} of {judged}" if judged else "-"
            out.append(f"| {name} | {ksched} / {isched} | {'; '.join(figures)} | {m_total / 1e6:.1f} | {total} | "
                       f"{share} | {itself} | {short} |")
    return "\n".join(out)


def main():
    manifest, runtime = sys.argv[1], sys.argv[2]
    as_markdown = len(sys.argv) > 3 and sys.argv[3] == "--markdown"
    rows = {}
    order = []
    late = {}
    for line in open(manifest):
        fields = line.rstrip("\n").split("\t")
        name, job, device, ksched, kfiles, isched, ifiles = fields[:7]
        if name not in rows:
            rows[name] = dict(job=job, device=device, pairs=[])
            order.append(name)
        rows[name]["pairs"].append((ksched, kfiles, isched, ifiles))
        late[(name, ksched)] = lateness(fields[7]) if len(fields) > 7 else None
    if as_markdown:
        print(markdown(rows, order))
        return
    out, agree, total_pairs, modal = [], 0, 0, 0
    self_runs, self_agree, steady, steady_agree = 0, 0, 0, 0
    for name in order:
        row = rows[name]
        names, weights, unit_of = layout(row["job"])
        UNTIMED.clear()
        text = open(row["job"]).read()
        if "time_based=0" in text:
            UNTIMED.update(re.findall(r"^\[(\w+)\][^\[]*?time_based=0", text, re.M | re.S))
        out.append(f"== {name} on {row['device']}")
        if any(w is not None for w in weights):
            wsum = sum(w or 0 for w in weights)
            out.append("   weight shares %:   " + " ".join(f"{100 * (w or 0) / wsum:5.1f}" for w in weights))
        out.append(f"   {'elevator':<20}{'MB/s':>9}{'p99 µs':>10}   shares % ({' '.join(names)})")
        for ksched, kfiles, isched, ifiles in row["pairs"]:
            if kfiles.startswith("SKIP"):
                out.append(f"   kernel {ksched} / ioslice {isched}: {kfiles}")
                continue
            if ifiles.startswith("SKIP"):
                # The kernel's figures still count as a record: ioslice has no counterpart yet.
                out.append(describe(f"kernel {ksched}", regroup(run_result(kfiles), unit_of), names, weights))
                out.append(f"   ioslice {isched}: {ifiles}")
                continue
            modes = kernel_modes(kfiles, unit_of, names)
            mine = regroup(run_result(ifiles), unit_of)
            said, _ = judge(modes, mine, names)
            total_pairs += 1
            agree += said.startswith("agrees")
            modal += said.startswith("agrees with the mode")
            runs = sum(count for _, count in modes)
            for index, (mode, count) in enumerate(modes):
                label = f"kernel {ksched}" + (f" ({count}/{runs})" if len(modes) > 1 else "")
                line = describe(label, mode, names, weights)
                if index == 0 and late.get((name, ksched)) is not None:
                    line += f"; emulator late p99 {late[(name, ksched)]} µs"
                out.append(line)
            out.append(describe(f"ioslice {isched}", mine, names, weights) + f"   {said}")
            agreeing, judged = self_agreement(kfiles, unit_of, names)
            if judged:
                out.append(f"   kernel {ksched} vs itself: {agreeing} of {judged} runs agree with the others")
                self_runs += judged
                self_agree += agreeing
                if agreeing == judged:
                    steady += 1
                    steady_agree += said.startswith("agrees")
        out.append("")
    with_mode = f", {modal} of them with one mode of the kernel's runs" if modal else ""
    out.append(f"{agree} of {total_pairs} pairs agree{with_mode} ({runtime} s a run). A pair agrees when ioslice's shares are in the")
    out.append(f"kernel's order, each within ±{100 * SHARE_TOLERANCE:.0f} % of the kernel's or ±{100 * SHARE_POINTS:.0f} points, "
               f"and its total within ±{100 * TOTAL_TOLERANCE:.0f} % of the kernel's or inside its range. p99 µs is the worst job's 99th")
    out.append("percentile completion latency. Kernel runs: fio on a loop device over `ioslice emulate`; ioslice runs:")
    out.append("the simulator on the same preset with --host driver_queue=128,block_layer=blk-mq.")
    if self_runs:
        out.append(f"The kernel against itself: {self_agree} of {self_runs} runs ({100 * self_agree / self_runs:.0f} %) agree, by the same rule,")
        out.append(f"with the other runs of their pair. In the {steady} pairs where every kernel run does, ioslice agrees in {steady_agree}.")
    print("\n".join(out))


if __name__ == "__main__":
    main()
