#!/bin/sh
# calibrate/gpu_session.sh - the first GPU session's run in one script (docs/CALIBRATION.md,
# Status): builds zerosim-calibrate with CUDA for the GPU at hand, runs the quick calibration
# against the h200-single platform (GEMMs, copies, NCCL on the local GPUs, CPU Adam, disk)
# with the comparison before and after calibration, then times one layer of two models
# beside zerosim's prediction. Every output goes under $OUT (default ./gpu-session), with
# each step's exit code in $OUT/status.txt, so a partial run still says what it measured.
# Budget on one H200 with 16 cores: build ~2 min, quick run < 2 min, each layer < 1 min.
# Needs what the project's build needs (cmake, pkg-config, SimGrid, cJSON, GSL, cmocka, zlib)
# plus the CUDA toolkit and NCCL; it stops at once, naming what is missing.
set -u
cd "$(dirname "$0")/.."
out=${OUT:-gpu-session}
jobs=${JOBS:-$(nproc)}
build=${BUILD_DIR:-build-gpu}
platform=${PLATFORM:-h200-single}
mkdir -p "$out"
: >"$out/status.txt"

step() { # step NAME SECONDS COMMAND...: runs it with a time limit, logs stdout/stderr and rc
    name=$1 limit=$2
    shift 2
    start=$(date +%s)
    timeout "$limit" "$@" >"$out/$name.out" 2>"$out/$name.err"
    rc=$?
    echo "$name rc=$rc seconds=$(($(date +%s) - start))" | tee -a "$out/status.txt"
    return $rc
}

for tool in cmake pkg-config nvcc timeout; do
    command -v "$tool" >/dev/null 2>&1 || { echo "gpu_session: $tool not found" >&2; exit 1; }
done
(nvidia-smi && nvidia-smi -q) >"$out/nvidia-smi.txt" 2>&1 || echo "gpu_session: nvidia-smi failed" >&2

step configure 120 cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" || { cat "$out/configure.err" >&2; exit 1; }
grep -q "building zerosim-calibrate" "$out/configure.out" ||
    { echo "gpu_session: CMake did not find CUDA and NCCL (see $out/configure.out)" >&2; exit 1; }
step build 300 cmake --build "$build" -j"$jobs" --target zerosim-calibrate ||
    { tail -30 "$out/build.out" >&2; exit 1; }

cal="$build/zerosim-calibrate"
step quick 240 "$cal" --quick --platform "$platform" --disk-dir "${DISK_DIR:-/tmp}" \
    --out "$out/$platform-quick.json" --compare "$platform"
step layer_llama-3-8b 120 "$cal" --layer llama-3-8b --platform "$platform" --seq 4096
step layer_gpt2-1.5b 120 "$cal" --layer gpt2-1.5b --platform "$platform" --micro-batch 8 \
    --seq 1024
