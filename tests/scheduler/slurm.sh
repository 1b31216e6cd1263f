#!/bin/sh
# slurm.sh ZEROSIM - workloads/grids/sweep-slurm.sh on a real single-node SLURM (issue 20).
#
# Starts munged and SLURM's slurmctld and slurmd for this host from generated files in a
# private directory (a munge key, a slurm.conf for one node with this machine's CPUs, spool
# and state directories), submits tests/scheduler/grid.json (the example grid cut to 48 runs)
# as a 4-task job array, waits for it with a bounded timeout, merges the shards with `zerosim
# sweep --merge`, and checks the result equals a -j 2 sweep of the same grid on this machine. Then it submits the array again into new
# outputs, kills one task's zerosim mid-way (SIGKILL), resubmits the array, and checks the
# resumed, merged result is the same again, and that a stepped array is refused. The daemons
# are stopped by their PIDs at exit.
# Needs root (the daemons run as root here) and Debian's slurm-wlm and munge; when they are
# missing it says so and exits 77 (skipped), never 0.
set -eu
zerosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
for tool in munged slurmctld slurmd sbatch squeue scancel; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "slurm.sh: SKIPPED: $tool not found (apt-get install slurm-wlm munge)"
        exit 77
    fi
done
if [ "$(id -u)" -ne 0 ]; then
    echo "slurm.sh: SKIPPED: the SLURM daemons need root here"
    exit 77
fi

work=$(mktemp -d /tmp/zerosim-slurm.XXXXXX)
chmod 700 "$work"
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null || true; done
    sleep 1
    for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM
fail() {
    echo "slurm.sh: FAILED: $*" >&2
    for f in "$work"/slurmctld.log "$work"/slurmd.log "$work"/munged.log; do
        [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; } >&2
    done
    exit 1
}

# munge: a generated key, its own socket
mkdir -m 700 "$work/munge"
dd if=/dev/urandom of="$work/munge/key" bs=1024 count=1 2>/dev/null
chmod 400 "$work/munge/key"
munged --force --key-file="$work/munge/key" --socket="$work/munge/socket" \
    --pid-file="$work/munge/pid" --log-file="$work/munged.log" --seed-file="$work/munge/seed"
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$work/munge/pid" ] && break; sleep 0.5; done
[ -s "$work/munge/pid" ] || fail "munged did not start"
pids="$pids $(cat "$work/munge/pid")"

host=$(hostname -s)
cpus=$(nproc)
mem_mb=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
port=$((20000 + $$ % 20000))
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=zerosim-ci
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$work/munge/socket
CredType=cred/munge
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=ci Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -i
slurmd
for _ in $(seq 1 40); do
    [ -s "$work/slurmctld.pid" ] && [ -s "$work/slurmd.pid" ] && sinfo -h -o %t 2>/dev/null | grep -q idle && break
    sleep 0.5
done
[ -s "$work/slurmctld.pid" ] || fail "slurmctld did not start"
[ -s "$work/slurmd.pid" ] || fail "slurmd did not start"
pids="$pids $(cat "$work/slurmctld.pid") $(cat "$work/slurmd.pid")"
sinfo -h -o %t | grep -q idle || fail "the node is not idle: $(sinfo -h -o '%t %E')"

grid=tests/scheduler/grid.json
cd "$root"
# the reference: the same grid on this machine, two workers
ZEROSIM_DATA_DIR="$root" "$zerosim" sweep "$grid" -j 2 --out "$work/reference.csv" 2>/dev/null

# rows in id order under the headers, for comparing
ordered() { { head -n 2 "$1"; tail -n +3 "$1" | sort -t, -k1,1n; }; }

submit() { # OUT_DIR: the 4-task array, waited for (bounded)
    timeout 240 sbatch --wait --array=0-3 --cpus-per-task=1 --chdir="$root" \
        --output="$work/task-%a.log" \
        --export=ALL,GRID="$grid",OUT_DIR="$1",ZEROSIM="$zerosim",ZEROSIM_DATA_DIR="$root" \
        workloads/grids/sweep-slurm.sh >/dev/null || fail "the array did not finish (sbatch --wait)"
}

submit "$work/run1"
"$zerosim" sweep --merge "$work/run1/merged.csv" "$work"/run1/shard-*.csv ||
    fail "merging the shards"
ordered "$work/reference.csv" | cmp -s - "$work/run1/merged.csv" ||
    fail "the merged array differs from a one-machine sweep"
echo "slurm.sh: 4-task array merged equals the -j 2 sweep ($(($(wc -l <"$work/run1/merged.csv") - 2)) rows)"

# killed mid-way, then resubmitted
timeout 240 sbatch --array=0-3 --cpus-per-task=1 --chdir="$root" --output="$work/kill-%a.log" \
    --export=ALL,GRID="$grid",OUT_DIR="$work/run2",ZEROSIM="$zerosim",ZEROSIM_DATA_DIR="$root" \
    workloads/grids/sweep-slurm.sh >/dev/null || fail "sbatch"
killed=""
for _ in $(seq 1 200); do
    if [ -f "$work/run2/shard-2.csv" ] && [ "$(wc -l <"$work/run2/shard-2.csv")" -ge 4 ]; then
        killed=$(pgrep -f -- "--shard 2/4 --out $work/run2" | head -n 1 || true)
        [ -n "$killed" ] && kill -9 $killed && break
    fi
    sleep 0.1
done
[ -n "$killed" ] || fail "no running task to kill"
for _ in $(seq 1 2400); do [ -z "$(squeue -h)" ] && break; sleep 0.1; done
[ -z "$(squeue -h)" ] || fail "the array did not end after the kill"
rows=$(($(wc -l <"$work/run2/shard-2.csv") - 2))
submit "$work/run2"
"$zerosim" sweep --merge "$work/run2/merged.csv" "$work"/run2/shard-*.csv ||
    fail "merging the resumed shards"
ordered "$work/reference.csv" | cmp -s - "$work/run2/merged.csv" ||
    fail "the resumed, merged array differs from a one-machine sweep"
echo "slurm.sh: killed shard 2 after $rows rows, resubmitted: merged result equal again"
# a stepped array is refused by the script, in one line (the variables sbatch --array=0-3:2
# sets for its first task)
if SLURM_ARRAY_TASK_MIN=0 SLURM_ARRAY_TASK_MAX=2 SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_STEP=2 \
    SLURM_ARRAY_TASK_COUNT=2 GRID="$grid" OUT_DIR="$work/run3" ZEROSIM="$zerosim" \
    workloads/grids/sweep-slurm.sh 2>"$work/step.log"; then
    fail "a stepped array was accepted"
fi
grep -q "expected a plain range array" "$work/step.log" || fail "no refusal of a stepped array"
[ "$(wc -l <"$work/step.log")" -eq 1 ] || fail "the refusal is not one line"
echo "slurm.sh: a stepped array is refused in one line"
echo "slurm.sh: PASSED"
