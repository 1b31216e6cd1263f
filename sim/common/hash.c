/*
 * hash.c - FNV-1a, 64 bits (see hash.h).
 */
#include "hash.h"

#include <stdio.h>

uint64_t hash_fnv1a64(const void *data, size_t n_bytes)
{
    const unsigned char *p = data;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n_bytes; i++) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

const char *hash_hex(uint64_t digest, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)digest);
    return out;
}
