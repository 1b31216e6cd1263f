#!/bin/bash
# A zerosim sweep spread over a SLURM job array: array task I of N runs shard I/N of the grid
# into its own CSV, with one worker per allocated CPU. Shards hold the points whose id % N is
# I (an id is a mixed digest of the point's key), about 1/N of the grid each, from every
# dimension. Resubmitting the same array resumes: each shard skips the rows its file already
# holds, and an edited grid keeps every remaining point in its shard. docs/SWEEP.md explains
# the options.
#
#   sbatch workloads/grids/sweep-slurm.sh                         # the example grid, 16 shards
#   sbatch --array=0-63 --export=ALL,GRID=my-grid.json,OUT_DIR=runs/mine \
#          workloads/grids/sweep-slurm.sh
#
# Submit from the zerosim checkout (a file system the compute nodes share): the grid, the
# models, configs and platforms are read there. The array must be a plain range (0-15, not
# 0-15:2 or 1,4,9). When every task is done, merge the shards into one CSV:
#
#   build/zerosim sweep --merge sweep.csv "$OUT_DIR"/shard-*.csv
#
#SBATCH --job-name=zerosim-sweep
#SBATCH --array=0-15
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=8
#SBATCH --mem-per-cpu=2G
#SBATCH --time=01:00:00
#SBATCH --output=zerosim-sweep-%A_%a.log
set -euo pipefail

GRID=${GRID:-workloads/grids/example.json}
ZEROSIM=${ZEROSIM:-build/zerosim}
OUT_DIR=${OUT_DIR:-sweep-out}

# Shard index and count from the array's own range, whatever it starts at. A stepped
# (0-15:2) or listed (1,4,9) array would leave shards out: refused, in one line.
first=${SLURM_ARRAY_TASK_MIN:?submit with sbatch --array}
n_shards=$((SLURM_ARRAY_TASK_MAX - first + 1))
shard=$((SLURM_ARRAY_TASK_ID - first))
if [ "${SLURM_ARRAY_TASK_STEP:-1}" != 1 ] || [ "${SLURM_ARRAY_TASK_COUNT:-$n_shards}" != "$n_shards" ]; then
    echo "sweep-slurm.sh: expected a plain range array (--array=0-15), got ${SLURM_ARRAY_TASK_COUNT:-?} tasks between $first and $SLURM_ARRAY_TASK_MAX with step ${SLURM_ARRAY_TASK_STEP:-1}: shards would be missing" >&2
    exit 2
fi

mkdir -p "$OUT_DIR"
echo "sweep-slurm.sh: shard $shard/$n_shards of $GRID into $OUT_DIR/shard-$shard.csv"
"$ZEROSIM" sweep "$GRID" -j "${SLURM_CPUS_PER_TASK:-1}" --shard "$shard/$n_shards" \
    --out "$OUT_DIR/shard-$shard.csv"
echo "sweep-slurm.sh: shard $shard/$n_shards done in $OUT_DIR/shard-$shard.csv; when every task is done: $ZEROSIM sweep --merge sweep.csv $OUT_DIR/shard-*.csv"
