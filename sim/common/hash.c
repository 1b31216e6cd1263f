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

uint64_t hash_mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}
