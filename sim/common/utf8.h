/*
 * utf8.h - UTF-8 validity, byte by byte, for the places where text from users (file contents,
 * paths, keys) reaches output that must stay valid: JSON reports and one-line error messages.
 *
 * Valid means RFC 3629: shortest-form sequences of 1 to 4 bytes, no UTF-16 surrogates
 * (U+D800..U+DFFF), nothing above U+10FFFF.
 */
#ifndef ZEROSIM_COMMON_UTF8_H
#define ZEROSIM_COMMON_UTF8_H

#include <stddef.h>

/* The length (1-4) of the valid UTF-8 sequence at s (n bytes available), or 0 when the bytes
 * there are not one. */
size_t utf8_sequence_length(const unsigned char *s, size_t n);

/* The offset of the first byte of s (n bytes) that is not part of valid UTF-8, or n. */
size_t utf8_first_invalid(const char *s, size_t n);

#endif
