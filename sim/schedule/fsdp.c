/*
 * fsdp.c - FSDP strategies mapped onto the ZeRO schedules (see fsdp.h).
 */
#include "fsdp.h"

#include "../common/choices.h"

/* The names are common/choices.h's table, in FsdpStrategy order. */
_Static_assert(FSDP_NONE == 0 && FSDP_FULL_SHARD == 1 && FSDP_SHARD_GRAD_OP == 2 &&
                   FSDP_NO_SHARD == 3 && FSDP_HYBRID_SHARD == 4,
               "choices_fsdp lists the strategies in FsdpStrategy order");

int fsdp_parse(const char *name, FsdpStrategy *out)
{
    int s = choices_parse(&choices_fsdp, name);
    if (s <= FSDP_NONE) /* "none" is no FSDP, expressed by leaving --fsdp out */
        return -1;
    *out = (FsdpStrategy)s;
    return 0;
}

const char *fsdp_name(FsdpStrategy s)
{
    return choices_name(&choices_fsdp, (int)s);
}

int fsdp_apply(FsdpStrategy s, bool backward_prefetch, uint64_t gpus_per_node, TrainConfig *train,
               ScheduleOptions *opts, Err *err)
{
    ZeroConfig *z = &train->zero;
    if (z->offload_optimizer.device != OFFLOAD_NONE || z->offload_param.device != OFFLOAD_NONE)
        return err_set(err,
                       "%s: zero_optimization.offload_*: expected no offload with --fsdp "
                       "(FSDP's CPUOffload is not modelled), got optimizer \"%s\", params \"%s\"",
                       train->file, ds_config_offload_name(z->offload_optimizer.device),
                       ds_config_offload_name(z->offload_param.device));
    z->stage = s == FSDP_NO_SHARD ? 0 : 3;
    z->overlap_comm = true;
    z->reduce_scatter = true;
    z->multi_rank_bucket_allreduce = false;
    z->reduce_bucket_size = 1;                /* each unit's gradients reduced on their own */
    z->prefetch_bucket_size = UINT64_MAX / 4; /* the whole next unit */
    z->max_live_parameters = UINT64_MAX / 4;
    z->param_persistence_threshold = 0; /* FSDP shards every parameter */
    z->shard_size = s == FSDP_HYBRID_SHARD ? gpus_per_node : 0;
    opts->fsdp = s;
    opts->fsdp_backward_prefetch = backward_prefetch;
    strlist_addf(&train->defaults_used,
                 "--fsdp %s: %s, one unit per layer, gradients reduced "
                 "per unit in every micro-batch, backward prefetch %s%s",
                 fsdp_name(s), s == FSDP_NO_SHARD ? "all-reduce (DDP)" : "ZeRO-3 schedule",
                 backward_prefetch ? "on" : "off",
                 s == FSDP_HYBRID_SHARD ? ", sharded inside each node" : "");
    return 0;
}
