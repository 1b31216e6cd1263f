/*
 * gpu_layer.h - the CUDA half of zerosim-calibrate --layer: runs a LayerPlan (layer.h) on
 * GPU 0 with cuBLAS and a streaming kernel, and times it (gpu_layer.cu). Built only where the
 * CUDA toolkit is found; the plan, the prediction and the table are plain C in layer.c.
 */
#ifndef ZEROSIM_CALIBRATE_GPU_LAYER_H
#define ZEROSIM_CALIBRATE_GPU_LAYER_H

#include "common/err.h"
#include "layer.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Times each kernel of plan alone (kernel_s[i], median of reps, at most 64) and the forward
 * and backward kernels back to back (fwd_s, bwd_s). A CUDA or cuBLAS error stops it with the
 * library's message. */
int gpu_layer_run(const LayerPlan *plan, uint32_t reps, double *kernel_s, double *fwd_s,
                  double *bwd_s, Err *err);

#ifdef __cplusplus
}
#endif

#endif
