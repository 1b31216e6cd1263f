/*
 * activations.h - bytes of activations kept for the backward pass, per GPU.
 *
 * Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large Transformer Models"),
 * section 4, without tensor or sequence parallelism: a GPT layer keeps s b h (34 + 5 a s / h)
 * bytes in 16-bit training. The count here is derived tensor by tensor as in the paper, so it
 * extends to grouped-query attention, gated MLPs and 4-byte activations, and reproduces the
 * paper's numbers for GPT shapes. Flash attention keeps no s x s score matrices (only a
 * per-row log-sum-exp); selective recomputation drops them too; full recomputation keeps each
 * layer's input and rebuilds one layer at a time during backward. A layer's backward holds
 * gradients beside what it saved (backward_extra, in activations.c).
 */
#ifndef ZEROSIM_MODEL_ACTIVATIONS_H
#define ZEROSIM_MODEL_ACTIVATIONS_H

#include "params.h"
#include "setup.h"

typedef struct ActivationBytes {
    uint64_t layer_stored; /* a layer that is not checkpointed, as kept until its backward */
    uint64_t layer_full;   /* one layer with nothing recomputed (its working set) */
    uint64_t attn_scores;  /* the a s^2 b part of layer_full (0 with flash attention) */
    uint64_t output_layer; /* final norm and logits inputs, and the loss (12 V eager, 4 V fused) */
    uint64_t checkpoint_per_layer; /* a checkpointed layer's input, s b h e */
    uint64_t checkpoints;          /* all checkpointed layers' inputs */
    uint64_t backward_extra;       /* a layer's backward: the activation gradients alive at
                                      its peak beyond the saved tensors still held */
    uint64_t peak;                 /* per GPU, one micro-batch: the most alive at once */
} ActivationBytes;

/* Activation memory of one micro-batch (setup->micro_batch sequences) on one GPU. */
void activations_bytes(const ModelConfig *cfg, const RunSetup *setup, ActivationBytes *out);

#endif
