# bench/lib/kernel-runs.sh — sourced by the bench scripts that run fio under the kernel's own
# I/O schedulers: choosing a device's elevator, and running a job file whose sections name
# cgroup weights with each section's fio process inside a real cgroup of that weight.
#
# fio's cgroup=/cgroup_weight= cannot be used on current kernels: under cgroup v1 fio writes
# blkio.weight, CFQ's file, which went with CFQ in Linux 5.0 (bfq's is blkio.bfq.weight), and the
# job fails with EACCES; under v2 it writes io.weight, which only the iocost controller reads, not
# bfq. So the groups are made here and each group's fio process is started inside its group.
#
# The caller sets: kr_work (a scratch directory), and calls kr_cgroups_init once (which sets
# kr_cg_mode, kr_cg_parent) and kr_cgroups_cleanup on exit. Messages go through `say`, which the
# caller defines.

kr_cg_mode=""     # v1, v2, or empty: no io/blkio controller (groups run unweighted)
kr_cg_root=""
kr_cg_parent=""   # the cgroup holding the groups this script makes
kr_child_pids=()  # fio processes running in the background (killed by kr_kill_children)

# Find a cgroup hierarchy with the io controller (v2) or blkio (v1) and make a parent group for
# this run. Prefer v2; hybrid setups (this project's machines) bind the block controller to v1.
kr_cgroups_init() {
    local _ mnt fstype opts
    while read -r _ mnt fstype opts _; do
        if [[ $fstype == cgroup2 && -z $kr_cg_mode ]] && grep -qw io "$mnt/cgroup.controllers" 2>/dev/null; then
            kr_cg_mode=v2 kr_cg_root=$mnt
        elif [[ $fstype == cgroup && ,$opts, == *,blkio,* && -z $kr_cg_root ]]; then
            kr_cg_root=$mnt
        fi
    done </proc/mounts
    if [[ -z $kr_cg_mode && -n $kr_cg_root ]]; then kr_cg_mode=v1; fi
    if [[ -z $kr_cg_mode ]]; then
        say "no cgroup hierarchy with the io/blkio controller: the weighted groups run unweighted"
        return
    fi
    kr_cg_parent="$kr_cg_root/ioslice-bench.$$"
    if [[ $kr_cg_mode == v2 ]]; then
        # v2: the io controller must be enabled in every ancestor's subtree_control.
        grep -qw io "$kr_cg_root/cgroup.subtree_control" || echo +io >"$kr_cg_root/cgroup.subtree_control"
        mkdir "$kr_cg_parent"
        echo +io >"$kr_cg_parent/cgroup.subtree_control"
    else
        mkdir "$kr_cg_parent"
    fi
    say "cgroups: $kr_cg_mode at $kr_cg_parent"
}

# Remove the groups made (children first: a cgroup can only be removed once empty).
kr_cgroups_cleanup() {
    local d
    if [[ -n $kr_cg_parent && -d $kr_cg_parent ]]; then
        for d in "$kr_cg_parent"/*/; do [[ -d $d ]] && rmdir "$d"; done
        rmdir "$kr_cg_parent" || say "could not remove cgroup $kr_cg_parent"
    fi
}

kr_kill_children() {
    local pid
    for pid in "${kr_child_pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
}

# Set the elevator of the block device whose queue directory is $1 ("/sys/block/loopN/queue")
# to $2: "none", "mq-deadline", "bfq" or "bfq:slice_idle=0,...". Switching elevators builds a
# fresh instance, so every run starts from the default tunables.
kr_set_kernel_sched() {
    local sysq=$1 spec=$2 name tunables kv
    local -a kvs=()
    name=${spec%%:*}
    tunables=""
    [[ $spec == *:* ]] && tunables=${spec#*:}
    # Through none first: selecting the elevator already in use keeps its tunables from the
    # last run (a low_latency=0 would outlive the run that asked for it); a fresh selection
    # starts from the elevator's defaults.
    echo none >"$sysq/scheduler"
    echo "$name" >"$sysq/scheduler"
    grep -q "\[$name\]" "$sysq/scheduler" || { say "could not select $name"; return 1; }
    if [[ -n $tunables ]]; then
        IFS=, read -ra kvs <<<"$tunables"
        for kv in "${kvs[@]}"; do echo "${kv#*=}" >"$sysq/iosched/${kv%%=*}"; done
    fi
}

# Give group directory $1 the weight $2 in whichever files this kernel has; a file that is
# missing (no bfq, no iocost) is simply skipped. Returns 1 if no weight file took the weight.
kr_set_group_weight() {
    local dir=$1 weight=$2 f ok=1
    for f in blkio.bfq.weight io.bfq.weight io.weight; do
        if [[ -f $dir/$f ]] && echo "$weight" >"$dir/$f" 2>/dev/null; then ok=0; fi
    done
    return "$ok"
}

# The job sections of job file $1 with their cgroup_weight (one "name weight" per line; weight 0
# when the section names none). [global] is not a job.
kr_job_weights() {
    awk '/^[[:space:]]*\[/ { gsub(/[][[:space:]]/, ""); sec = $0; if (sec != "global") { order[++n] = sec; w[sec] = 0 } next }
         /^[[:space:]]*cgroup_weight[[:space:]]*=/ { sub(/^[^=]*=[[:space:]]*/, ""); w[sec] = $0 + 0 }
         END { for (i = 1; i <= n; i++) print order[i], w[order[i]] }' "$1"
}

# Run job file $1 with fio under the current elevator; outputs go to $2.json (or, for a job file
# with cgroup_weight= lines, $2.SECTION.json per section, each section's fio process moved into
# its cgroup before it execs fio). Extra fio arguments follow.
kr_run_fio() {
    local job=$1 prefix=$2 name weight filtered pid rc=0 i
    shift 2
    local -a names=() weights=()
    while read -r name weight; do names+=("$name"); weights+=("$weight"); done < <(kr_job_weights "$job")
    if ! grep -Eq '^[[:space:]]*cgroup_weight[[:space:]]*=' "$job"; then
        fio "$@" --output-format=json+ --output="$prefix.json" "$job" >"$prefix.log" 2>&1
        return
    fi
    # The job file without its cgroup lines: fio must not try to make the cgroups itself.
    filtered="$kr_work/without-cgroups.$(basename "$job")"
    grep -Ev '^[[:space:]]*cgroup(_weight)?[[:space:]]*=' "$job" >"$filtered"
    kr_child_pids=()
    for i in "${!names[@]}"; do
        name=${names[$i]}
        if [[ -n $kr_cg_mode ]]; then
            mkdir -p "$kr_cg_parent/$name"
            kr_set_group_weight "$kr_cg_parent/$name" "${weights[$i]}" ||
                say "warning: no weight file took ${weights[$i]} for $name"
        fi
        (
            # The subshell moves itself into the group, then becomes fio (same PID).
            if [[ -n $kr_cg_mode ]]; then echo "$BASHPID" >"$kr_cg_parent/$name/cgroup.procs"; fi
            exec fio "$@" --section="$name" --output-format=json+ --output="$prefix.$name.json" "$filtered"
        ) >"$prefix.$name.log" 2>&1 &
        kr_child_pids+=($!)
    done
    for pid in "${kr_child_pids[@]}"; do wait "$pid" || rc=$?; done
    kr_child_pids=()
    return "$rc"
}
