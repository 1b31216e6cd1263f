/*
 * setup.c - names of the run choices and which layers are checkpointed (see setup.h).
 */
#include "setup.h"

#include "../common/choices.h"

_Static_assert(RECOMPUTE_NONE == 0 && RECOMPUTE_SELECTIVE == 1 && RECOMPUTE_FULL == 2 &&
                   RECOMPUTE_SELECTIVE_OP == 3,
               "choices_recompute lists the recomputations in Recompute order");

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *setup_recompute_name(Recompute r, uint32_t every, char *buf, size_t buf_size)
{
    if (r == RECOMPUTE_FULL && every > 1)
        snprintf(buf, buf_size, "every:%u", every);
    else
        snprintf(buf, buf_size, "%s", choices_name(&choices_recompute, (int)r));
    return buf;
}

int setup_recompute_parse(const char *name, Recompute *out, uint32_t *out_every)
{
    *out_every = 1;
    int named = choices_parse(&choices_recompute, name);
    if (named >= 0)
        *out = (Recompute)named;
    else if (strncmp(name, "every:", 6) == 0) {
        char *end = NULL;
        errno = 0;
        unsigned long n = strtoul(name + 6, &end, 10);
        if (name[6] < '1' || name[6] > '9' || *end != '\0' || errno || n > 1000000)
            return -1;
        *out = RECOMPUTE_FULL;
        *out_every = (uint32_t)n;
    } else {
        return -1;
    }
    return 0;
}

bool setup_is_checkpointed(const RunSetup *s, uint64_t layer)
{
    uint32_t every = s->checkpoint_every ? s->checkpoint_every : 1;
    return s->recompute == RECOMPUTE_FULL && layer % every == 0;
}

uint64_t setup_n_checkpointed(const RunSetup *s, uint64_t n_layers)
{
    uint32_t every = s->checkpoint_every ? s->checkpoint_every : 1;
    return s->recompute == RECOMPUTE_FULL ? (n_layers + every - 1) / every : 0;
}
