/*
 * choices.h - the named values of zerosim's enumerated options, one table each, shared by the
 * command line, the sweep grid and the reports so that a value is spelled, accepted and listed
 * the same way everywhere.
 *
 * A table lists the names in the order of the enum it names (the owning module asserts the
 * correspondence: collective algorithms in engine/, FSDP strategies and schedule variants in
 * schedule/, recomputation in model/, collective kinds in schedule/graph.h). It lives in
 * common/ because inputs/ (the sweep grid) needs it and may not include the layers that own
 * the enums.
 */
#ifndef ZEROSIM_COMMON_CHOICES_H
#define ZEROSIM_COMMON_CHOICES_H

#include <stdbool.h>
#include <stddef.h>

typedef struct Choices {
    const char *const *names; /* index = the enum's value; NULL-terminated */
    bool is_case_insensitive; /* FSDP's strategies are PyTorch's enum names, in any case */
} Choices;

/* Simulation mode of `zerosim run --mode`. */
typedef enum SimMode { SIM_MODE_AUTO, SIM_MODE_FULL, SIM_MODE_SYMMETRIC } SimMode;

extern const Choices choices_algo;       /* auto ring hier tree nvls nvls_tree (CollAlgo) */
extern const Choices choices_mode;       /* auto full symmetric (SimMode) */
extern const Choices choices_schedule;   /* deepspeed textbook (ScheduleVariant) */
extern const Choices choices_fsdp;       /* none FULL_SHARD ... (FsdpStrategy) */
extern const Choices choices_fsdp_param_dtype; /* fp32 fp16 bf16 (Precision: FSDP's
                                                   MixedPrecision.param_dtype) */
extern const Choices choices_fsdp_version; /* 1 2 (index + 1: FSDP's implementation) */
extern const Choices choices_recompute;  /* none selective full (Recompute; every:N aside) */
extern const Choices choices_collective; /* all_reduce ... broadcast, all_to_all (CollectiveKind) */
extern const Choices choices_module_loading; /* lazy eager (true is 1: "eager") */
extern const Choices choices_zero_init;      /* on off (--zero-init) */
extern const Choices choices_on_off;     /* on off (true is 0: "on") */
extern const Choices choices_comm_model; /* nccl ideal (CommModel) */
extern const Choices choices_flash;      /* on v2 v1 v3 off (--flash-attention; on is v2) */
extern const Choices choices_cross_entropy; /* eager fused fused-linear eager-16bit */
extern const Choices choices_elementwise;   /* fused eager liger (--elementwise) */
extern const Choices choices_ring_order; /* packed spread cross_nic (PlatformRingOrder) */

/* The value named by text, or -1. */
int choices_parse(const Choices *c, const char *text);

/* The name of value v (0 <= v < choices_count(c)). */
const char *choices_name(const Choices *c, int v);

size_t choices_count(const Choices *c);

/* "auto, ring, hier or tree" into buf (truncated to buf_size); returns buf. With skip_first,
 * the first name (a "none" that an option expresses by being absent) is left out. */
const char *choices_expected(const Choices *c, bool skip_first, char *buf, size_t buf_size);

#endif
