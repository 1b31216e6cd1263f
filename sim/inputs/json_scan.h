/*
 * json_scan.h - what cJSON accepts but a JSON input of zerosim must not hold: bytes that are
 * not UTF-8, a key given twice in one object, a number too large for a double.
 *
 * cJSON keeps both copies of a duplicated key and lookups return the first, while DeepSpeed
 * and HuggingFace (Python's json) keep the last: `"stage": 3, "stage": 0` would silently be
 * simulated as another configuration than the one that runs. cJSON turns 1e999 into infinity
 * (printed back as null) and copies invalid UTF-8 into the reports. One pass over the text,
 * run after cJSON has parsed it (so the text is known to be well-formed JSON), names the place
 * of each with line:column and, for keys, the JSON path.
 */
#ifndef ZEROSIM_INPUTS_JSON_SCAN_H
#define ZEROSIM_INPUTS_JSON_SCAN_H

#include "../common/err.h"

#include <stddef.h>

/* Checks text (n_bytes of well-formed JSON) named `file` in messages. 0, or -1 with err set:
 *   FILE:L:C: expected UTF-8 text, got the byte 0xff
 *   FILE:L:C: zero_optimization.stage: expected each key once in an object, got it again
 *             (first at 4:5)
 *   FILE:L:C: train_batch_size: expected a number a double can hold, got 1e999 */
int json_scan_check(const char *file, const char *text, size_t n_bytes, Err *err);

#endif
