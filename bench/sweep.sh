#!/bin/sh
# sweep.sh - bench_step over GPU counts, models and modes: one Markdown table row per run,
# then the growth exponent of the simulation's CPU time between the smallest and largest
# counts of each model and mode (docs/PERFORMANCE.md gives this machine's figures).
#
#   bench/sweep.sh BENCH_STEP [GPUS...]
#
# GPUS defaults to "64 256 1024" (what CI-sized machines finish in minutes); the large sizes
# (4096, 16384) are run by hand. MODELS (default "gpt-1t gpt3-175b") and MODES (default
# "full symmetric") select the rest; every run is ZeRO-3 (the shipped zero3 config) with full
# activation checkpointing on dgx-a100-80g, bench_step's defaults.
set -eu
bench=${1:?usage: sweep.sh BENCH_STEP [GPUS...]}
shift
gpus=${*:-64 256 1024}
models=${MODELS:-gpt-1t gpt3-175b}
modes=${MODES:-full symmetric}
rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
echo "| model | mode | GPUs | ops | activities | load (s) | build (s) | sim wall (s) | sim CPU (s) | events/s (CPU) | peak RSS (MB) | RSS per GPU (kB) | step (s) |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for model in $models; do
    for mode in $modes; do
        for n in $gpus; do
            out=$("$bench" --gpus "$n" --model "$model" --mode "$mode")
            echo "$out" | awk -v model="$model" -v mode="$mode" -v n="$n" '
                /^ops /               { ops = $2 }
                /^activities /        { act = $2 }
                /^step time /         { step = $3 }
                /^inputs \+ platform/ { load = $4 }
                /^graph build /       { build = $3 }
                /^simulation /        { wall = $2; cpu = $8 }
                /^peak RSS /          { rss = $3; per = $5; sub(/\(/, "", per) }
                END {
                    rate = cpu > 0 ? act / cpu : 0
                    printf("| %s | %s | %d | %d | %d | %.3f | %.3f | %.2f | %.2f | %.0f | %.1f | %.1f | %s |\n",
                           model, mode, n, ops, act, load, build, wall, cpu, rate, rss, per, step)
                    printf("%s %s %d %s\n", model, mode, n, cpu) > "/dev/stderr"
                }' 2>>"$rows"
        done
    done
done
echo
awk '{ key = $1 " " $2; if (!(key in n0)) { n0[key] = $3; c0[key] = $4 } n1[key] = $3; c1[key] = $4 }
     END { for (k in n0) if (n1[k] > n0[k] && c0[k] > 0)
               printf "growth exponent %s, %d to %d GPUs: %.2f\n", k, n0[k], n1[k],
                      log(c1[k] / c0[k]) / log(n1[k] / n0[k]) }' "$rows"
