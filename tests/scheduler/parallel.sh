#!/bin/sh
# parallel.sh ZEROSIM - workloads/grids/sweep-parallel.sh with GNU parallel on local job slots
# (issue 20): the scheduler grid in 3 shards over two slots of this machine (the sshlogin
# "2/:"), merged by the script, must equal a -j 2 sweep; then a run whose shard 1 is killed
# (SIGKILL) mid-way, and the same command again, must give the same merged result. Needs
# Debian's parallel; without it, says so and exits 77 (skipped), never 0.
set -eu
zerosim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v parallel >/dev/null 2>&1; then
    echo "parallel.sh: SKIPPED: GNU parallel not found (apt-get install parallel)"
    exit 77
fi
work=$(mktemp -d /tmp/zerosim-parallel.XXXXXX)
trap 'rm -rf "$work"' EXIT INT TERM
fail() {
    echo "parallel.sh: FAILED: $*" >&2
    exit 1
}
grid=$root/tests/scheduler/grid.json
export ZEROSIM_DATA_DIR="$root" ZEROSIM="$zerosim"
echo "2/:" >"$work/hosts"
"$zerosim" sweep "$grid" -j 2 --out "$work/reference.csv" 2>/dev/null
ordered() { { head -n 2 "$1"; tail -n +3 "$1" | sort -t, -k1,1n; }; }

cd "$work"
mkdir run1 && cd run1
timeout 240 "$root/workloads/grids/sweep-parallel.sh" "$work/hosts" "$grid" 3 >"$work/run1.log" 2>&1 ||
    fail "the first run: $(tail -n 3 "$work/run1.log")"
grep -q "merged into sweep-out/sweep.csv" "$work/run1.log" || fail "the script did not say where the output went"
ordered "$work/reference.csv" | cmp -s - sweep-out/sweep.csv ||
    fail "the merged shards differ from a one-machine sweep"
echo "parallel.sh: 3 shards on 2 local slots, merged, equal the -j 2 sweep"

cd "$work" && mkdir run2 && cd run2
timeout 240 "$root/workloads/grids/sweep-parallel.sh" "$work/hosts" "$grid" 3 \
    >"$work/run2.log" 2>&1 &
runner=$!
killed=""
for _ in $(seq 1 300); do
    if [ -f sweep-out/shard-1.csv ] && [ "$(wc -l <sweep-out/shard-1.csv)" -ge 4 ]; then
        killed=$(pgrep -f -- "--shard 1/3 --out sweep-out/shard-1.csv" | head -n 1 || true)
        [ -n "$killed" ] && kill -9 $killed && break
    fi
    sleep 0.1
done
wait "$runner" && [ -n "$killed" ] && fail "the run with a killed shard reported success"
[ -n "$killed" ] || fail "no running shard to kill"
timeout 240 "$root/workloads/grids/sweep-parallel.sh" "$work/hosts" "$grid" 3 \
    >"$work/run3.log" 2>&1 || fail "the resumed run: $(tail -n 3 "$work/run3.log")"
ordered "$work/reference.csv" | cmp -s - sweep-out/sweep.csv ||
    fail "the resumed, merged shards differ from a one-machine sweep"
echo "parallel.sh: shard 1 killed mid-way, the same command again: merged result equal"
echo "parallel.sh: PASSED"
