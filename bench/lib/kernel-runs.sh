# bench/lib/kernel-runs.sh — sourced by the bench scripts that run fio under the kernel's own
# I/O schedulers: choosing a device's elevator, and running a job file whose jobs name cgroups
# with one fio process per cgroup, inside a real cgroup of that weight.
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

# Remove the groups made, nested ones too (children first: a cgroup can only be removed once
# empty).
kr_cgroups_cleanup() {
    if [[ -n $kr_cg_parent && -d $kr_cg_parent ]]; then
        find "$kr_cg_parent" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
        rmdir "$kr_cg_parent" || say "could not remove cgroup $kr_cg_parent"
    fi
}

kr_kill_children() {
    local pid
    for pid in "${kr_child_pids[@]}"; do kill "$pid" 2>/dev/null; done
    wait 2>/dev/null
}

# The KERNEL=IOSLICE pairs of --pairs $1, one "KERNEL<TAB>IOSLICE" line each. Pairs are
# separated by ';', or by ',' when no side carries tunables; KERNEL is none, mq-deadline, bfq or
# kyber, with its sysfs tunables as NAME:key=N,key=N (values are numbers, so the first '='
# after one starts the ioslice side). Says what is wrong and returns 2 for a bad pair.
kr_parse_pairs() {
    local text=$1 pair
    local -a list=()
    if [[ $text == *";"* || $text == *:* ]]; then
        IFS=';' read -ra list <<<"$text"
    else
        IFS=, read -ra list <<<"$text"
    fi
    local kernel_re='^((none|mq-deadline|bfq|kyber)(:[a-z_]+=[0-9]+(,[a-z_]+=[0-9]+)*)?)=([a-z].*)$'
    ((${#list[@]})) || { say "--pairs: no pair given (such as bfq=bfq,none=noop)"; return 2; }
    for pair in "${list[@]}"; do
        pair=${pair//[[:space:]]/}
        if ! [[ $pair =~ $kernel_re ]]; then
            say "--pairs: '$pair' is not KERNEL[:key=N,...]=IOSLICE with KERNEL one of none, mq-deadline, bfq, kyber (pairs with tunables are separated by ';')"
            return 2
        fi
        printf '%s\t%s\n' "${BASH_REMATCH[1]}" "${BASH_REMATCH[5]}"
    done
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

# The limits job file $1 sets on its groups, from lines `; limit: GROUP KEY=N,KEY=N...` (KEY one
# of rbps, wbps, riops, wiops; N bytes or I/Os per second), a line each: "GROUP<TAB>KEY=N,...".
# fio ignores them; the kernel's runs write them to blk-throttle's files (kr_set_group_limits)
# and ioslice's run gives them as `--cgroup GROUP:KEY=N,...,throttle=above`.
kr_job_limits() {
    sed -n 's/^[[:space:]]*[;#][[:space:]]*limit:[[:space:]]*\([^[:space:]]\{1,\}\)[[:space:]]\{1,\}\([^[:space:]]\{1,\}\)[[:space:]]*$/\1\t\2/p' "$1"
}

# Hold group directory $1 to limits $2 ("rbps=N,riops=N,...") on the block device whose number
# is $3 (MAJ:MIN), in blk-throttle's files: cgroup v1's blkio.throttle.{read,write}_{bps,iops}_device,
# or v2's io.max. Returns 2 for a limit it cannot read, 1 if the kernel refused one.
kr_set_group_limits() {
    local dir=$1 limits=$2 devnum=$3 kv key value file
    local -a kvs
    IFS=, read -ra kvs <<<"$limits"
    for kv in "${kvs[@]}"; do
        key=${kv%%=*}
        value=${kv#*=}
        [[ $value =~ ^[1-9][0-9]*$ ]] || { say "limit '$kv': expected KEY=N with N a whole number per second"; return 2; }
        case $key in
        rbps) file=blkio.throttle.read_bps_device ;;
        wbps) file=blkio.throttle.write_bps_device ;;
        riops) file=blkio.throttle.read_iops_device ;;
        wiops) file=blkio.throttle.write_iops_device ;;
        *) say "limit '$kv': expected rbps, wbps, riops or wiops"; return 2 ;;
        esac
        if [[ $kr_cg_mode == v2 ]]; then
            echo "$devnum $key=$value" >"$dir/io.max" || { say "io.max refused '$devnum $key=$value'"; return 1; }
        else
            echo "$devnum $value" >"$dir/$file" || { say "$file refused '$devnum $value'"; return 1; }
        fi
    done
}

# The MAJ:MIN number of block device $1.
kr_device_number() {
    printf '%d:%d' "0x$(stat -L -c %t "$1")" "0x$(stat -L -c %T "$1")"
}

# The kernel-side processes of job file $1, one line each in order of first appearance:
# "CGROUP<TAB>WEIGHT<TAB>SECTION SECTION ...". The jobs that name the same cgroup= run in one
# fio process inside that cgroup, as ioslice groups them; the jobs that name none run in one
# process in the root ("-"). WEIGHT is the group's cgroup_weight (0: none given). A [global]
# cgroup= or cgroup_weight= applies to the sections after it that do not set their own, as
# fio reads it.
kr_job_groups() {
    awk '
        function value() { v = $0; sub(/^[^=]*=[[:space:]]*/, "", v); sub(/[[:space:]]+$/, "", v); return v }
        /^[[:space:]]*[;#]/ { next }
        /^[[:space:]]*\[/ {
            sec = $0; gsub(/[][[:space:]]/, "", sec)
            if (sec != "global") { order[++n] = sec; cg[sec] = gcg; w[sec] = gw }
            next
        }
        /^[[:space:]]*cgroup[[:space:]]*=/ { if (sec == "global") gcg = value(); else if (sec != "") cg[sec] = value(); next }
        /^[[:space:]]*cgroup_weight[[:space:]]*=/ { if (sec == "global") gw = value() + 0; else if (sec != "") w[sec] = value() + 0; next }
        END {
            for (i = 1; i <= n; i++) {
                s = order[i]; c = (cg[s] == "") ? "-" : cg[s]
                if (!(c in index_of)) { index_of[c] = ++m; name[m] = c; weight[m] = w[s] + 0; members[m] = s }
                else { k = index_of[c]; members[k] = members[k] " " s; if (weight[k] == 0) weight[k] = w[s] + 0 }
            }
            for (k = 1; k <= m; k++) printf "%s\t%s\t%s\n", name[k], weight[k], members[k]
        }' "$1"
}

# The random seed fio gives its jobs when the job file sets none (fio's FIO_RANDSEED).
kr_fio_randseed=$((0xb1899bed))

# Job file $1 as the kernel-side processes run it, written to $2: without its cgroup= and
# cgroup_weight= lines (fio must not make the groups itself), and, when $3 is 1 (the jobs run
# in several fio processes) and the file sets no randseed=, each section's own randseed=,
# fio's default plus the section's place in the file. fio seeds a job from its number within
# its process, so without this the first job of every process would draw the same random
# offsets, and two random readers in two groups would read the same blocks.
kr_job_for_processes() {
    local several=$3
    grep -Eq '^[[:space:]]*randseed[[:space:]]*=' "$1" && several=0
    awk -v several="$several" -v base="$kr_fio_randseed" '
        /^[[:space:]]*cgroup(_weight)?[[:space:]]*=/ { next }
        { print }
        /^[[:space:]]*\[/ {
            sec = $0; gsub(/[][[:space:]]/, "", sec)
            if (several == 1 && sec != "global") printf "randseed=%.0f\n", base + k++
        }' "$1" >"$2"
}

# The random seed each section of job file $1 gets in the kernel's runs, "SECTION SEED" a line,
# as kr_job_for_processes gives them ("fio" where fio seeds it itself).
kr_job_seeds() {
    local several=$2
    grep -Eq '^[[:space:]]*randseed[[:space:]]*=' "$1" && several=0
    awk -v several="$several" -v base="$kr_fio_randseed" '
        /^[[:space:]]*[;#]/ { next }
        /^[[:space:]]*\[/ {
            sec = $0; gsub(/[][[:space:]]/, "", sec)
            if (sec == "global") next
            if (several == 1) printf "%s %.0f\n", sec, base + k++; else print sec, "fio"
        }' "$1"
}

# Run job file $1 with fio under the current elevator; outputs go to $2.json, or, when its jobs
# run in several processes or in a cgroup (kr_job_groups), to $2.GROUP.json per process (GROUP
# the cgroup's path with '/' as '-', or "root"), each process moved into its cgroup before it
# execs fio. $2.processes.tsv lists the processes: GROUP, cgroup, weight, sections, and each
# section's random seed. A group the file limits (kr_job_limits) is held to its limits on the
# device $KV_DEVICE. Extra fio arguments follow.
kr_run_fio() {
    local job=$1 prefix=$2 line cgroup weight sections label dir section pid limits rc=0 several=0
    shift 2
    local -a groups=() args=()
    mapfile -t groups < <(kr_job_groups "$job")
    ((${#groups[@]} > 1)) && several=1
    printf 'process\tcgroup\tweight\tsections\tseeds\n' >"$prefix.processes.tsv"
    if ((${#groups[@]} == 1)) && [[ ${groups[0]%%$'\t'*} == - ]]; then
        printf 'root\t-\t0\t%s\t%s\n' "${groups[0]##*$'\t'}" "fio" >>"$prefix.processes.tsv"
        fio "$@" --output-format=json+ --output="$prefix.json" "$job" >"$prefix.log" 2>&1
        return
    fi
    local filtered="$kr_work/for-processes.$(basename "$job")"
    kr_job_for_processes "$job" "$filtered" "$several"
    local seeds
    seeds=$(kr_job_seeds "$job" "$several")
    kr_child_pids=()
    for line in "${groups[@]}"; do
        IFS=$'\t' read -r cgroup weight sections <<<"$line"
        label=${cgroup//\//-}
        [[ $cgroup == - ]] && label=root
        args=()
        for section in $sections; do args+=("--section=$section"); done
        dir=""
        limits=$(kr_job_limits "$job" | awk -F'\t' -v g="$cgroup" '$1 == g { print $2 }')
        if [[ $cgroup != - && -n $kr_cg_mode ]]; then
            dir="$kr_cg_parent/$cgroup"
            mkdir -p "$dir"
            if ((weight > 0)); then
                kr_set_group_weight "$dir" "$weight" || say "warning: no weight file took $weight for $cgroup"
            fi
            if [[ -n $limits ]]; then
                kr_set_group_limits "$dir" "$limits" "$(kr_device_number "$KV_DEVICE")" || return 1
            fi
        elif [[ -n $limits ]]; then
            say "$job: limits for $cgroup need a cgroup hierarchy with blkio or io"
            return 1
        fi
        printf '%s\t%s\t%s\t%s\t%s\n' "$label" "$cgroup" "$weight" "$sections" \
            "$(awk -v list=" $sections " 'index(list, " " $1 " ") { printf "%s%s=%s", sep, $1, $2; sep = " " }' <<<"$seeds")" \
            >>"$prefix.processes.tsv"
        (
            # The subshell moves itself into the group, then becomes fio (same PID).
            if [[ -n $dir ]]; then echo "$BASHPID" >"$dir/cgroup.procs"; fi
            exec fio "$@" "${args[@]}" --output-format=json+ --output="$prefix.$label.json" "$filtered"
        ) >"$prefix.$label.log" 2>&1 &
        kr_child_pids+=($!)
    done
    for pid in "${kr_child_pids[@]}"; do wait "$pid" || rc=$?; done
    kr_child_pids=()
    return "$rc"
}
