#!/bin/bash
# slurm_cli.sh - scripts/slurm/ on a real single-node Slurm (issue 21): Debian's slurmctld and
# slurmd on 127.0.0.1 in a temporary folder (auth/none, no munge), the node declaring two GPUs
# as a generic resource backed by /dev/null and /dev/zero (none is touched: the shards run
# --plan-only), so
# the unchanged batch script's --gpus=1 is scheduled as on a GPU cluster. submit.sh puts a job
# array of 4 shards and a merge job with --dependency=afterok; the merged database must hold
# every planned item of one unsharded plan exactly once, the merge must have started after the
# last shard ended, and a failing shard must keep the merge from running. Skipped (77), saying
# why, where Slurm is not installed or does not come up. Stops its daemons on every exit.
# Environment (set by CTest): TB, TB_SRC, TB_BUILD. About 20 s.
set -u
pass=0; fail=0
ok()   { echo "ok   $1"; pass=$((pass+1)); }
bad()  { echo "FAIL $1: $2"; fail=$((fail+1)); }
skip() { echo "SKIP: $1"; exit 77; }
for t in slurmctld slurmd sbatch squeue scontrol sinfo; do
    command -v $t >/dev/null 2>&1 || [ -x /usr/sbin/$t ] || skip "no $t (Debian: apt-get install slurm-wlm; scripts/setup.sh does)"
done
[ "$(id -u)" = 0 ] || skip "slurmd needs root here (it runs jobs as their owner)"
PATH=$PATH:/usr/sbin
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done; kill -9 "$p" 2>/dev/null; done
    pkill -f "slurmstepd.*$tmp" 2>/dev/null
    sleep 0.3
    [ -n "${KEEP_SLURM_TMP:-}" ] && echo "kept $tmp" || rm -rf "$tmp"
}
trap cleanup EXIT
host=$(hostname -s)
mkdir -p "$tmp/state" "$tmp/spool" "$tmp/log"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=tilebench-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$((20000 + RANDOM % 20000))
SlurmdPort=$((40001 + RANDOM % 20000))
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MailProg=/bin/true
SchedulerParameters=sched_interval=1,bf_interval=1
MinJobAge=600
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
# two "GPUs" whose files are /dev/null and /dev/zero: Slurm counts and hands them out (it
# rejects a gpu gres without files: "count reported lower than configured"); nothing opens them
printf 'AutoDetect=off\nNodeName=%s Name=gpu File=/dev/null\nNodeName=%s Name=gpu File=/dev/zero\n' "$host" "$host" > "$tmp/gres.conf"
export SLURM_CONF=$tmp/slurm.conf
slurmctld -D -f "$SLURM_CONF" > "$tmp/log/ctld.out" 2>&1 & pids+=($!)
slurmd -D -f "$SLURM_CONF" > "$tmp/log/d.out" 2>&1 & pids+=($!)
up=""
for _ in $(seq 1 100); do
    st=$(sinfo -h -o %T 2>/dev/null | head -1)
    [ "$st" = idle ] && { up=1; break; }
    sleep 0.2
done
[ -n "$up" ] || skip "Slurm did not come up in 20 s (node state '${st:-none}'): $(tail -2 "$tmp/log/slurmctld.log" "$tmp/log/slurmd.log" 2>/dev/null | tr '\n' ' ')"
echo "slurm up: $(sinfo -h -o '%N %T %G' | head -1)"

wait_jobs() {   # wait_jobs ID...: until none is pending or running (60 s)
    for _ in $(seq 1 300); do
        [ -z "$(squeue -h -j "$(IFS=,; echo "$*")" 2>/dev/null)" ] && return 0
        sleep 0.2
    done; return 1
}
state() { scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | head -1 | cut -d= -f2; }
field() { scontrol show job "$1" 2>/dev/null | grep -o "$2=[^ ]*" | head -1 | cut -d= -f2; }
items() { /usr/bin/python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
for r in c.execute("SELECT v.name, p.m, p.n, p.k, p.batch, m.status FROM measurements m JOIN variants v ON v.id = m.variant_id JOIN problems p ON p.id = m.problem_id"):
    print(*r)' "$1"; }

vs=(--variants "$TB_BUILD/lib/tilebench/variants/cublaslt.so" --variants "$TB_BUILD/lib/tilebench/variants/simt_naive.so")
"$TB" sweep "${vs[@]}" --shapes square,llm --plan-only --no-progress --db "$tmp/whole.db" 2>/dev/null \
    || { bad slurm-0 "the unsharded plan failed"; exit 1; }

# 1. the array of 4 shards, then the merge
out=$(TB="$TB" "$TB_SRC/scripts/slurm/submit.sh" 4 "$tmp/run" "${vs[@]}" --shapes square,llm --plan-only 2>&1); rc=$?
echo "$out"
array=$(grep -o 'job array [0-9]*' <<<"$out" | grep -o '[0-9]*$'); merge=$(grep -o 'merge: job [0-9]*' <<<"$out" | grep -o '[0-9]*$')
[ $rc = 0 ] && [ -n "$array" ] && [ -n "$merge" ] && ok slurm-1.1 || bad slurm-1.1 "submit.sh exited $rc"
wait_jobs "$array" "$merge" || bad slurm-1.2 "the jobs did not finish in 60 s: $(squeue -h)"
tasks=$(for t in 0 1 2 3; do state "${array}_$t"; done | sort | uniq -c | tr -s ' ')
[ "$(state "$merge")" = COMPLETED ] && [ "$tasks" = " 4 COMPLETED" ] && ok slurm-1.2 \
    || bad slurm-1.2 "array tasks: $tasks; merge job: $(state "$merge"); $(cat "$tmp"/run/*.out 2>/dev/null | tail -5)"
got=$(items "$tmp/run/merged.db" 2>/dev/null | sort)
[ -n "$got" ] && [ "$got" = "$(items "$tmp/whole.db" | sort)" ] && [ -z "$(uniq -d <<<"$got")" ] && ok slurm-1.3 \
    || bad slurm-1.3 "the merged database does not hold every planned item exactly once ($(wc -l <<<"$got") items)"
[ "$(/usr/bin/python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM runs").fetchone()[0])' "$tmp/run/merged.db" 2>&1)" = 4 ] \
    && ok slurm-1.4 || bad slurm-1.4 "the merged database does not hold the 4 shards' runs"
# the merge began after the last shard ended (afterok), and each task had its own GPU
last_end=$(for t in 0 1 2 3; do field "${array}_$t" EndTime; done | sort | tail -1)
mstart=$(field "$merge" StartTime)
[ -n "$last_end" ] && [ -n "$mstart" ] && [[ ! "$mstart" < "$last_end" ]] \
    && ok slurm-1.5 || bad slurm-1.5 "merge started $mstart, last shard ended $last_end"
g=$(cat "$tmp"/run/tilebench-shard-*.out 2>/dev/null | grep -o 'GPU [^)]*)' | sort | uniq -c | tr -s ' ')
[ "$(grep -c 'GPU [01])' <<<"$g")" -ge 1 ] && ! grep -q 'GPU none' <<<"$g" && [ "$(cat "$tmp"/run/tilebench-shard-*.out | grep -c 'GPU [01])')" = 4 ] \
    && ok slurm-1.6 || bad slurm-1.6 "each shard task was not given one GPU: $g"

# 2. a shard that fails: the merge never runs (afterok), and says so
out=$(TB="$TB" "$TB_SRC/scripts/slurm/submit.sh" 2 "$tmp/bad" "${vs[@]}" --shapes 99999999999x1x1 --plan-only 2>&1)
array=$(grep -o 'job array [0-9]*' <<<"$out" | grep -o '[0-9]*$'); merge=$(grep -o 'merge: job [0-9]*' <<<"$out" | grep -o '[0-9]*$')
wait_jobs "$array" "$merge"
ms=$(state "$merge")
[ "$(state "${array}_0")" = FAILED ] && [ "$ms" != COMPLETED ] && [ ! -e "$tmp/bad/merged.db" ] && ok slurm-2.1 \
    || bad slurm-2.1 "shard 0: $(state "${array}_0"), merge: $ms, merged.db $(ls "$tmp/bad/merged.db" 2>&1)"

# 3. submit.sh refuses what it sets itself, and a bad N, before submitting anything
n0=$(squeue -h | wc -l)
TB="$TB" "$TB_SRC/scripts/slurm/submit.sh" 2 "$tmp/x" --shard 0/2 >/dev/null 2>&1; r1=$?
TB="$TB" "$TB_SRC/scripts/slurm/submit.sh" 0 "$tmp/y" >/dev/null 2>&1; r2=$?
[ $r1 = 2 ] && [ $r2 = 2 ] && [ "$(squeue -h | wc -l)" = "$n0" ] && ok slurm-3.1 || bad slurm-3.1 "exit $r1, $r2"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
