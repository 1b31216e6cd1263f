/*
 * test_hash.c - the digests of common/hash.c against values computed independently.
 *
 * FNV-1a-64 test vectors from the reference (Fowler, Noll, Vo: "" and "a"), the MurmurHash3
 * fmix64 finalizer on 0 (a fixed point) and on two inputs computed in Python, and the hex form.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "common/hash.h"

#include <string.h>

static void test_hash_fnv1a64_reference_vectors(void **state)
{
    (void)state;
    assert_true(hash_fnv1a64("", 0) == UINT64_C(0xcbf29ce484222325));
    assert_true(hash_fnv1a64("a", 1) == UINT64_C(0xaf63dc4c8601ec8c));
    assert_true(hash_fnv1a64("foobar", 6) == UINT64_C(0x85944171f73967e8));
}

/* Python: h ^= h >> 33; h = h * 0xff51afd7ed558ccd mod 2^64; h ^= h >> 33;
 * h = h * 0xc4ceb9fe1a85ec53 mod 2^64; h ^= h >> 33. */
static void test_hash_mix64_spreads_low_bits(void **state)
{
    (void)state;
    assert_true(hash_mix64(0) == 0);
    assert_true(hash_mix64(1) == UINT64_C(0xb456bcfc34c2cb2c));
    assert_true(hash_mix64(UINT64_C(0xcbf29ce484222325)) == UINT64_C(0xefd01f60ba992926));
    /* FNV-1a's low bit is the parity of the bytes' low bits: "1" and "3" share it; mixed,
     * the low bits of 256 consecutive inputs take both values about equally. */
    assert_int_equal(hash_fnv1a64("1", 1) & 1, hash_fnv1a64("3", 1) & 1);
    int ones = 0;
    for (uint64_t i = 0; i < 256; i++)
        ones += (int)(hash_mix64(i << 8) & 1);
    assert_in_range(ones, 96, 160);
}

static void test_hash_hex(void **state)
{
    (void)state;
    char hex[17];
    assert_string_equal(hash_hex(UINT64_C(0x00f0000000000abc), hex), "00f0000000000abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash_fnv1a64_reference_vectors),
        cmocka_unit_test(test_hash_mix64_spreads_low_bits),
        cmocka_unit_test(test_hash_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
