/*
 * hash.h - a 64-bit FNV-1a digest of bytes: how a sweep's output records the exact grid and
 * input files its rows were computed from, so that a resumed or merged sweep can tell when
 * one of them changed behind the same name. Not a cryptographic hash (nothing adversarial is
 * defended against): a change of any byte changes it with overwhelming probability.
 */
#ifndef ZEROSIM_COMMON_HASH_H
#define ZEROSIM_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a over n bytes (Fowler, Noll, Vo; offset basis 14695981039346656037, prime 2^40 + 435). */
uint64_t hash_fnv1a64(const void *data, size_t n_bytes);

/* MurmurHash3's 64-bit finalizer (Appleby, "fmix64"): every input bit flips each output bit
 * with probability close to 1/2. FNV-1a's low k bits depend only on the low k bits of each
 * byte, so ids taken modulo a shard count are mixed with it first. */
uint64_t hash_mix64(uint64_t h);

/* The digest as 16 lowercase hex digits into out (17 bytes); returns out. */
const char *hash_hex(uint64_t digest, char out[17]);

#endif
