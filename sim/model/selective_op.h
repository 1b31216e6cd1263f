/*
 * selective_op.h - op-level selective activation checkpointing as torchtitan applies it: per
 * transformer block, the outputs of the matmuls and of the fused attention kernel are saved
 * for backward, except every second matmul; everything else (norms, rotary embeddings,
 * activations, residual adds) is recomputed in backward.
 *
 * torchtitan (torchtitan/parallelisms/parallelize_llama.py, _apply_ac_to_transformer_block,
 * selective_ac_option = "op", the release its 2024 benchmarks ran): the block is wrapped in
 * PyTorch's non-reentrant checkpoint with create_selective_checkpoint_contexts and a policy
 * that counts aten.mm calls per block forward and returns MUST_SAVE for ops in _save_list
 * (aten.mm, SDPA's flash and memory-efficient kernels, reduce_scatter_tensor) unless the op is
 * an mm whose count is even, PREFER_RECOMPUTE for the rest. The checkpoint also keeps the
 * block's input. A projection with a bias runs as aten.addmm (ATen Linear.cpp, linear() on
 * flattened input), which is not in the list and does not advance the count.
 *
 * A layer's forward projections, in the order PyTorch runs them (and kernels.c issues them):
 * the fused QKV projection or Q, K, V; the attention output projection; the MLP's gate and up
 * (gated) or up; its down projection. Used by activations.c (what a layer keeps), flops.c and
 * kernels.c (what backward recomputes).
 */
#ifndef ZEROSIM_MODEL_SELECTIVE_OP_H
#define ZEROSIM_MODEL_SELECTIVE_OP_H

#include "../inputs/model_config.h"

#include <stdbool.h>
#include <stdint.h>

#define SELECTIVE_OP_MAX_LINEARS 7

typedef struct SelectiveOp {
    unsigned n_linears;                      /* forward projections of one layer */
    bool is_saved[SELECTIVE_OP_MAX_LINEARS]; /* by forward order (above) */
    uint64_t saved_out_per_token;            /* output elements per token of the saved ones */
    uint64_t saved_weights;                  /* their weight elements (in x out), for FLOPs */
} SelectiveOp;

/* Which of cfg's layer projections the policy saves. */
void selective_op_layer(const ModelConfig *cfg, SelectiveOp *out);

#endif
