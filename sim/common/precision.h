/* precision: the numeric format of the training's working copy of parameters and gradients.
 *
 * One enum shared by the inputs that name it (ds_config, platform peaks per dtype), the engine
 * that runs kernels in it and the reports that print it, so that none of them includes another
 * layer's header for it. */
#ifndef ZEROSIM_COMMON_PRECISION_H
#define ZEROSIM_COMMON_PRECISION_H

typedef enum Precision { PRECISION_FP32, PRECISION_FP16, PRECISION_BF16 } Precision;

/* "fp32", "fp16" or "bf16": the name DeepSpeed's config and the reports use. */
const char *precision_name(Precision p);

#endif
