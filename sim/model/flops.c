/*
 * flops.c - hardware, model and Megatron-formula FLOPs of a step (see flops.h).
 */
#include "flops.h"

#include "selective_op.h"

double flops_megatron_formula(double batch, double seq, double layers, double hidden, double vocab,
                              bool full_recompute)
{
    double base = batch * seq * layers * hidden * hidden;
    if (full_recompute)
        return 96.0 * base * (1.0 + seq / (6.0 * hidden) + vocab / (16.0 * layers * hidden));
    return 72.0 * base * (1.0 + seq / (6.0 * hidden) + vocab / (12.0 * layers * hidden));
}

void flops_step(const ModelConfig *cfg, const ModelParams *params, const RunSetup *setup,
                StepFlops *out)
{
    const double s = (double)setup->seq_len;
    const double tokens = (double)setup->global_batch * s;
    const double L = (double)cfg->n_layers;
    const double q_dim = (double)(cfg->n_heads * cfg->head_dim);

    /* QK^T: 2 s (a d); AV: 2 s (a d). A sliding-window layer attends to at most w keys per
     * query, and FlashAttention-2's window_size skips the key blocks outside it (flash-attn
     * 2.3, "sliding window"); unfused attention still multiplies the whole masked s x s.
     * The per-layer figure is the mean over layers, so the sum over layers is exact. */
    double keys = s;
    if (setup->is_flash_attention && cfg->n_sliding_layers > 0 && cfg->sliding_window < s)
        keys = ((L - (double)cfg->n_sliding_layers) * s +
                (double)cfg->n_sliding_layers * (double)cfg->sliding_window) /
               L;
    out->attn_core_per_token = 4.0 * keys * q_dim;
    out->layer_fwd_per_token = 2.0 * (double)params->gemm_per_layer + out->attn_core_per_token;
    out->logits_fwd_per_token = 2.0 * (double)cfg->hidden * (double)cfg->vocab;

    /* Forward once, backward twice the forward; recomputation re-runs forward work: the whole
     * layer for checkpointed layers, the attention core under selective recomputation. */
    const double n_ck = (double)setup_n_checkpointed(setup, cfg->n_layers);
    double recompute_per_token = n_ck * out->layer_fwd_per_token;
    if (setup->recompute == RECOMPUTE_SELECTIVE)
        recompute_per_token = L * out->attn_core_per_token;
    if (setup->recompute == RECOMPUTE_SELECTIVE_OP) {
        /* every layer re-runs its forward but the saved matmuls and the flash kernel */
        SelectiveOp sop;
        selective_op_layer(cfg, &sop);
        recompute_per_token = L * (out->layer_fwd_per_token - 2.0 * (double)sop.saved_weights -
                                   (setup->is_flash_attention ? out->attn_core_per_token : 0.0));
    }
    out->hardware = tokens * (L * out->layer_fwd_per_token * 3.0 + recompute_per_token +
                              3.0 * out->logits_fwd_per_token);
    /* PaLM (Chowdhery et al. 2022) appendix B: 6 N + 12 L (a d) s per token. */
    out->model = tokens * (6.0 * (double)params->total + 12.0 * L * q_dim * s);
    out->megatron = flops_megatron_formula((double)setup->global_batch, s, L, (double)cfg->hidden,
                                           (double)cfg->vocab, n_ck == L);
}
