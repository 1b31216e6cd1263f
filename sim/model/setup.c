/*
 * setup.c - names of the run choices (see setup.h).
 */
#include "setup.h"

#include <string.h>

static const char *const recompute_names[] = {"none", "selective", "full"};

const char *setup_recompute_name(Recompute r) { return recompute_names[r]; }

int setup_recompute_parse(const char *name, Recompute *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, recompute_names[i]) == 0) {
            *out = (Recompute)i;
            return 0;
        }
    }
    return -1;
}
