/*
 * moe.c - expert-parallel placement and all-to-all volume (see moe.h).
 */
#include "moe.h"

uint64_t moe_ep_size(const ModelParams *p, const RunSetup *setup)
{
    if (p->n_experts == 0 || setup->ep_size < 2)
        return 1;
    return setup->ep_size;
}

double moe_capacity_factor(const RunSetup *setup)
{
    return setup->capacity_factor > 0 ? setup->capacity_factor : 1.0;
}

uint64_t moe_local_expert_params(const ModelParams *p, uint64_t ep)
{
    return ep > 1 ? p->experts_total / ep : p->experts_total;
}

double moe_load_factor(const RunSetup *setup)
{
    const double cf = moe_capacity_factor(setup);
    return setup->moe_imbalance > cf ? setup->moe_imbalance : cf;
}

double moe_routed_tokens(const ModelParams *p, const RunSetup *setup)
{
    if (p->n_experts == 0)
        return 0.0;
    const double tokens = (double)setup->micro_batch * (double)setup->seq_len;
    return moe_load_factor(setup) * tokens * (double)p->top_k;
}

double moe_all_to_all_buffer_bytes(const ModelConfig *cfg, const ModelParams *p,
                                   const RunSetup *setup)
{
    return moe_routed_tokens(p, setup) * (double)cfg->hidden * (double)setup->act_bytes;
}

double moe_all_to_all_step_bytes(const ModelConfig *cfg, const ModelParams *p,
                                 const RunSetup *setup)
{
    const uint64_t ep = moe_ep_size(p, setup);
    if (ep < 2)
        return 0.0;
    uint64_t n_recomputed = 0;
    for (uint64_t u = 0; u < cfg->n_layers; u++)
        n_recomputed += setup->recompute == RECOMPUTE_FULL && setup_is_checkpointed(setup, u) &&
                        model_config_is_moe_layer(cfg, u);
    const double calls = 4.0 * (double)p->n_moe_layers + 2.0 * (double)n_recomputed;
    return (double)setup->grad_accum * calls * moe_all_to_all_buffer_bytes(cfg, p, setup) *
           (double)(ep - 1) / (double)ep;
}
