/*
 * flops.c - hardware, model and Megatron-formula FLOPs of a step (see flops.h).
 */
#include "flops.h"

#include "selective_op.h"
#include "moe.h"

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
    /* QK^T over the query/key width, AV over the value width (MLA: heads x (qk_nope +
     * qk_rope) and heads x v_head_dim) */
    const double v_dim =
        cfg->mla.kv_lora_rank > 0 ? (double)(cfg->n_heads * cfg->mla.v_head_dim) : q_dim;
    out->attn_core_per_token = 2.0 * keys * (q_dim + v_dim);
    /* A mixture of experts: each token passes the router, the shared experts and top_k
     * routed experts of a MoE layer (the active parameters); expert buffers padded to
     * capacity_factor x the balanced share run capacity_factor x the routed work (DeepSpeed's
     * sharded_moe.py computes on the whole [experts, capacity, h] tensor). The per-layer figure
     * is the mean over dense and MoE layers, so the sum over layers is exact. */
    double mlp_gemm = 0.0;
    if (params->n_experts > 0) {
        const double routed = (double)(params->top_k * params->expert);
        const double n_moe = (double)params->n_moe_layers;
        mlp_gemm = ((L - n_moe) * (double)params->gemm_dense_mlp +
                    n_moe * ((double)params->gemm_active_moe - routed +
                             moe_capacity_factor(setup) * routed)) /
                   L;
    }
    out->layer_fwd_per_token =
        2.0 * ((double)params->gemm_per_layer + mlp_gemm) + out->attn_core_per_token;
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
    /* ... with N the active parameters of a mixture of experts (DeepSeek-V3 report, sec.
     * 3: MFU from activated parameters) */
    out->model = tokens * (6.0 * (double)params->active + 6.0 * L * (q_dim + v_dim) * s);
    out->megatron = flops_megatron_formula((double)setup->global_batch, s, L, (double)cfg->hidden,
                                           (double)cfg->vocab, n_ck == L);
}
