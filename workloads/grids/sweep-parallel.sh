#!/bin/sh
# A zerosim sweep spread over machines with GNU parallel over ssh: N shards of the grid, one
# at a time per machine, each using all of that machine's cores; every shard's CSV is copied
# back here. Running the same command again resumes: the shards skip the rows they already
# hold on the remote side. docs/SWEEP.md explains the options.
#
# usage: workloads/grids/sweep-parallel.sh HOSTS GRID [N_SHARDS]
#   HOSTS     a file of ssh logins, one per line (GNU parallel's --sshloginfile; ":" is
#             this machine)
#   GRID      the grid file, a path relative to the checkout
#   N_SHARDS  how many slices (default: one per host; more balance uneven machines)
#
# Every host needs the zerosim checkout, built, at the same path as here ($PWD, or
# REMOTE_DIR): a shared file system or a copy (rsync -a --exclude build/ then .ci/setup).
# Results land in ./sweep-out/shard-I.csv, and when every shard is done they are merged into
# ./sweep-out/sweep.csv (zerosim sweep --merge, which checks every shard and point is there).
set -eu
if [ $# -lt 2 ]; then
    echo "usage: $0 HOSTS GRID [N_SHARDS]" >&2
    exit 2
fi
hosts=$1
grid=$2
n_shards=${3:-$(grep -c -v -e '^[[:space:]]*$' -e '^#' "$hosts")}
remote_dir=${REMOTE_DIR:-$PWD}
zerosim=${ZEROSIM:-build/zerosim}

mkdir -p sweep-out
# --workdir: run in the checkout on each host; --return: copy each shard's file back (to
# the same relative path here); -j 1: one shard per host at a time, zerosim -j uses the
# cores. $(nproc) is quoted so that each host counts its own.
seq 0 $((n_shards - 1)) |
    parallel --sshloginfile "$hosts" -j 1 --workdir "$remote_dir" \
        --return "sweep-out/shard-{}.csv" --line-buffer --tagstring 'shard {}' \
        "mkdir -p sweep-out && $zerosim sweep $grid -j \$(nproc) --shard {}/$n_shards --out sweep-out/shard-{}.csv"
shards=$(seq 0 $((n_shards - 1)) | sed 's|.*|sweep-out/shard-&.csv|')
# shellcheck disable=SC2086 # one word per shard file
"$zerosim" sweep --merge sweep-out/sweep.csv $shards
echo "sweep-parallel.sh: $n_shards shards in sweep-out/shard-*.csv, merged into sweep-out/sweep.csv"
