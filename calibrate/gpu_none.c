/*
 * gpu_none.c - the GPU entry points of zerosim-calibrate in a build without CUDA.
 *
 * Where CMake finds no CUDA toolkit, nvcc or NCCL, zerosim-calibrate is still built, for the
 * parts that need no GPU: --from-trace, --samples, --cpu-only, and --layer's prediction. Each
 * GPU entry point here fails with the same message, so the command says why and exits 3
 * (no GPU), exactly as a CUDA build does on a machine without a usable GPU.
 */
#include "gpu.h"
#include "gpu_layer.h"

static int gpu_none(Err *err)
{
    return err_set(err, "no usable CUDA GPU: zerosim-calibrate was built without CUDA (the "
                        "CUDA toolkit, nvcc or NCCL was not found at configure time)");
}

int gpu_info_probe(SampleSet *s, Err *err)
{
    (void)s;
    return gpu_none(err);
}

int gpu_gemm_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    (void)plan, (void)out;
    return gpu_none(err);
}

int gpu_copy_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    (void)plan, (void)out;
    return gpu_none(err);
}

int gpu_launch_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    (void)plan;
    (void)out;
    return gpu_none(err);
}

int gpu_nccl_bench(const BenchPlan *plan, SampleSet *out, Err *err)
{
    (void)plan, (void)out;
    return gpu_none(err);
}

int gpu_layer_run(const LayerPlan *plan, uint32_t reps, double *kernel_s, double *fwd_s,
                  double *bwd_s, Err *err)
{
    (void)plan, (void)reps, (void)kernel_s, (void)fwd_s, (void)bwd_s;
    return gpu_none(err);
}
