/* precision: names of the training precisions (precision.h). */
#include "precision.h"

const char *precision_name(Precision p)
{
    return p == PRECISION_FP16 ? "fp16" : p == PRECISION_BF16 ? "bf16" : "fp32";
}
