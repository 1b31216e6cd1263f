/*
 * choices.c - the tables of named option values and their lookups (see choices.h).
 */
#define _DEFAULT_SOURCE /* strcasecmp */

#include "choices.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const algo_names[] = {"auto", "ring", "hier", "tree", "nvls", "nvls_tree", NULL};
static const char *const mode_names[] = {"auto", "full", "symmetric", NULL};
static const char *const schedule_names[] = {"deepspeed", "textbook", NULL};
static const char *const fsdp_names[] = {"none",     "FULL_SHARD",   "SHARD_GRAD_OP",
                                         "NO_SHARD", "HYBRID_SHARD", NULL};
static const char *const fsdp_param_dtype_names[] = {"fp32", "fp16", "bf16", NULL};
static const char *const fsdp_version_names[] = {"1", "2", NULL};
static const char *const recompute_names[] = {"none", "selective", "full", "selective-op", NULL};
static const char *const collective_names[] = {"all_reduce", "all_gather", "reduce_scatter",
                                               "broadcast", "all_to_all", NULL};
static const char *const on_off_names[] = {"on", "off", NULL};
static const char *const comm_model_names[] = {"nccl", "ideal", NULL};
static const char *const flash_names[] = {"on", "v2", "v1", "v3", "triton", "off", NULL};

const Choices choices_algo = {algo_names, false};
const Choices choices_mode = {mode_names, false};
static const char *const ring_order_names[] = {"packed", "spread", "cross_nic", NULL};
const Choices choices_ring_order = {ring_order_names, false};
const Choices choices_schedule = {schedule_names, false};
const Choices choices_fsdp = {fsdp_names, true};
const Choices choices_fsdp_param_dtype = {fsdp_param_dtype_names, false};
const Choices choices_fsdp_version = {fsdp_version_names, false};
const Choices choices_recompute = {recompute_names, false};
const Choices choices_collective = {collective_names, false};
const Choices choices_on_off = {on_off_names, false};
const Choices choices_flash = {flash_names, false};

static const char *const cross_entropy_names[] = {"eager", "fused", "fused-linear",
                                                  "eager-16bit", NULL};
static const char *const elementwise_names[] = {"fused", "eager", "liger", NULL};
static const char *const module_loading_names[] = {"lazy", "eager", NULL};
const Choices choices_module_loading = {module_loading_names, false};
static const char *const zero_init_names[] = {"on", "off", NULL};
const Choices choices_zero_init = {zero_init_names, false};
const Choices choices_cross_entropy = {cross_entropy_names, false};
const Choices choices_elementwise = {elementwise_names, false};
const Choices choices_comm_model = {comm_model_names, false};

int choices_parse(const Choices *c, const char *text)
{
    for (int v = 0; text != NULL && c->names[v] != NULL; v++)
        if ((c->is_case_insensitive ? strcasecmp(text, c->names[v]) : strcmp(text, c->names[v])) ==
            0)
            return v;
    return -1;
}

size_t choices_count(const Choices *c)
{
    size_t n = 0;
    while (c->names[n] != NULL)
        n++;
    return n;
}

const char *choices_name(const Choices *c, int v)
{
    assert(v >= 0 && (size_t)v < choices_count(c));
    return c->names[v];
}

const char *choices_expected(const Choices *c, bool skip_first, char *buf, size_t buf_size)
{
    const size_t n = choices_count(c), first = skip_first ? 1 : 0;
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = first; i < n && used < buf_size; i++) {
        const char *sep = i == first ? "" : i + 1 == n ? " or " : ", ";
        int w = snprintf(buf + used, buf_size - used, "%s%s", sep, c->names[i]);
        used += w > 0 ? (size_t)w : 0;
    }
    return buf;
}
