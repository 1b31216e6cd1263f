#!/bin/sh
# run_all.sh BUILD_DIR SECONDS - runs every libFuzzer target for SECONDS each.
#
# Each target starts from a scratch corpus seeded with the shipped files of its format
# (model: workloads/models/*.json, ds_config: workloads/ds_configs/*.json, platform:
# platforms/*.json, grid: workloads/grids/*.json and tests/golden/inputs/sweep-*.json,
# calibration: tests/golden/inputs/calibration-*.json, cli: tests/fuzz/seeds/cli-*.txt) plus the inputs that once broke it or
# reach rarer paths
# (tests/fuzz/regressions/<format>-*.json;
# add a reproducer there with each fix) and uses tests/fuzz/<format>.dict. Any crash, leak,
# sanitizer report, timeout or out-of-memory fails the run; the reproducer is kept under
# BUILD_DIR/fuzz-artifacts/<target>/ and the target's log tail is printed. Exits non-zero
# naming every target that failed. Build first:
#   CC=clang cmake -S . -B build-fuzz -DZEROSIM_FUZZ=ON -DZEROSIM_SANITIZE=ON
#   cmake --build build-fuzz --target fuzz_targets
set -eu

if [ $# -ne 2 ]; then
    echo "usage: $0 BUILD_DIR SECONDS" >&2
    exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
case $seconds in
'' | *[!0-9]*)
    echo "run_all.sh: SECONDS: expected a whole number, got '$seconds'" >&2
    exit 2
    ;;
esac
fuzz_dir=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$fuzz_dir/../.." && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/zerosim-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

# Sanitizer reports must end the process with a failure and show where they came from.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:symbolize=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"

failed=""
run_one() { # target dict seed-glob...
    target=$1
    dict=$2
    shift 2
    exe="$build/tests/fuzz/$target"
    if [ ! -x "$exe" ]; then
        echo "run_all.sh: $exe: expected a built fuzz target, got nothing (build the" \
            "fuzz_targets target first)" >&2
        failed="$failed $target"
        return
    fi
    corpus="$work/$target"
    artifacts="$build/fuzz-artifacts/$target"
    rm -rf "$artifacts"
    mkdir -p "$corpus" "$artifacts"
    for seed in "$@"; do
        if [ -f "$seed" ]; then cp "$seed" "$corpus/"; fi # an unmatched glob stays literal
    done
    log="$work/$target.log"
    echo "== $target: $(find "$corpus" -type f | wc -l) seeds, ${seconds} s"
    start=$(date +%s)
    if "$exe" "$corpus" -dict="$fuzz_dir/$dict" -max_total_time="$seconds" -detect_leaks=1 \
        -error_exitcode=1 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" >"$log" 2>&1; then
        echo "   ok: $(grep -E '^#[0-9]+.*DONE' "$log" | tail -n 1 || true)" \
            "($(($(date +%s) - start)) s)"
    else
        rc=$?
        echo "!! $target FAILED (exit $rc); reproducer(s) in $artifacts/:" >&2
        ls "$artifacts" >&2 || true
        echo "-- last 60 lines of its log:" >&2
        tail -n 60 "$log" >&2
        failed="$failed $target"
    fi
}

run_one fuzz_model_config model_config.dict "$root"/workloads/models/*.json \
    "$fuzz_dir"/regressions/model_config-*.json
run_one fuzz_ds_config ds_config.dict "$root"/workloads/ds_configs/*.json \
    "$fuzz_dir"/regressions/ds_config-*.json
run_one fuzz_platform platform.dict "$root"/platforms/*.json \
    "$fuzz_dir"/regressions/platform-*.json
run_one fuzz_grid grid.dict "$root"/workloads/grids/*.json \
    "$root"/tests/golden/inputs/sweep-*.json "$fuzz_dir"/regressions/grid-*.json
run_one fuzz_calibration calibration.dict "$root"/tests/golden/inputs/calibration-*.json \
    "$fuzz_dir"/regressions/calibration-*.json
run_one fuzz_pipeline pipeline.dict "$fuzz_dir"/seeds/pipeline-*.txt \
    "$fuzz_dir"/regressions/pipeline-*.txt
run_one fuzz_sweep_resume sweep_resume.dict "$fuzz_dir"/seeds/sweep-* \
    "$fuzz_dir"/regressions/sweep-*
run_one fuzz_cli cli.dict "$fuzz_dir"/seeds/cli-*.txt "$fuzz_dir"/regressions/cli-*.txt

if [ -n "$failed" ]; then
    echo "run_all.sh: fuzz targets failed:$failed" >&2
    exit 1
fi
echo "run_all.sh: all fuzz targets passed (${seconds} s each)"
