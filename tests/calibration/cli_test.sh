#!/bin/sh
# zerosim-calibrate's trace and layer paths end to end, with or without a GPU (ctest
# calibrate_cli): --from-trace on a real trace must write a calibration that `zerosim run
# --calibration` accepts, and --layer must print zerosim's prediction (exit 0 with a GPU,
# 3 without). Usage: cli_test.sh ZEROSIM_CALIBRATE ZEROSIM SOURCE_DIR WORK_DIR
set -u
calibrate=$1 zerosim=$2 src=$3 work=$4
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$calibrate" --from-trace "$src/tests/calibration/hta_a100_step551.json.gz" \
    --platform dgx-a100-80g --out "$work/trace.json" >"$work/trace.out" 2>"$work/trace.err"
rc=$?
[ $rc -eq 0 ] || { cat "$work/trace.err"; fail "--from-trace exited $rc"; }
grep -q "^trace .*: 1375 GPU activities on NVIDIA A100-SXM4-80GB, 1 steps$" "$work/trace.out" ||
    fail "--from-trace: no trace line"
grep -q "^kernel launches: 358 host calls, median 4.00 us" "$work/trace.out" ||
    fail "--from-trace: no launch line"
grep -q "^  copy d2d .* over 24$" "$work/trace.out" || fail "--from-trace: no d2d fit"
grep -q "note: gemm fp32: not fitted: gemm fp32: expected at least 3 measured sizes" \
    "$work/trace.err" || fail "--from-trace: no note for the GEMM group"
grep -q '"mode": "trace"' "$work/trace.json" || fail "--from-trace: JSON without mode trace"
[ -s "$work/trace.csv" ] || fail "--from-trace: no samples CSV"

# The calibration it wrote is one the simulator reads.
"$zerosim" run --model gpt2-1.5b --config zero2 --platform dgx-a100-80g --gpus 8 \
    --calibration "$work/trace.json" >"$work/run.out" 2>"$work/run.err" ||
    { cat "$work/run.err"; fail "zerosim run --calibration on the trace's calibration failed"; }
grep -q "trace.json: 3 platform values replaced by measured ones" "$work/run.out" ||
    fail "zerosim run: the trace's calibration was not applied"

"$calibrate" --layer llama-3-8b --platform h200-single --seq 1024 --reps 3 \
    >"$work/layer.out" 2>"$work/layer.err"
rc=$?
[ $rc -eq 0 ] || [ $rc -eq 3 ] || { cat "$work/layer.err"; fail "--layer exited $rc"; }
grep -q "^one layer of llama-3-8b: 1 x 1024 tokens, bf16; zerosim on h200-single$" \
    "$work/layer.out" || fail "--layer: no header"
grep -q "^layer forward:  measured .*, zerosim (cost.c layer_fwd) " "$work/layer.out" ||
    fail "--layer: no forward total"

"$calibrate" --from-trace x.json --samples y.csv >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] || fail "--from-trace with --samples: expected exit 2"
echo "calibrate_cli: ok"
