/*
 * suggest.c - closest-key suggestion by edit distance (see suggest.h).
 */
#include "suggest.h"

#include <string.h>

#define SUGGEST_MAX_LEN 128

size_t suggest_distance(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    if (na > SUGGEST_MAX_LEN || nb > SUGGEST_MAX_LEN)
        return na > nb ? na : nb;
    size_t row[SUGGEST_MAX_LEN + 1];
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[nb];
}

const char *suggest_closest(const char *word, const char *const *candidates)
{
    size_t limit = strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    const char *best = NULL;
    size_t best_d = limit + 1;
    for (size_t i = 0; candidates[i] != NULL; i++) {
        size_t d = suggest_distance(word, candidates[i]);
        if (d < best_d) {
            best_d = d;
            best = candidates[i];
        }
    }
    return best;
}
