/*
 * json_writer.h - a streaming JSON writer for reports and traces.
 *
 * Writes straight to a FILE, tracking only whether a comma is due at each nesting level, so
 * large outputs (Chrome traces of millions of events) need no tree in memory. Keys and strings
 * are escaped; non-finite numbers become null (JSON has no NaN). Nesting errors are our own
 * bugs and are caught by assert.
 */
#ifndef ZEROSIM_REPORT_JSON_WRITER_H
#define ZEROSIM_REPORT_JSON_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_WRITER_MAX_DEPTH 32

typedef struct JsonWriter {
    FILE *out;
    int depth;
    bool needs_comma[JSON_WRITER_MAX_DEPTH];
    bool after_key;
    bool is_pretty;
} JsonWriter;

/* Starts a document on out (borrowed). Pretty output indents by two spaces. */
void json_writer_init(JsonWriter *w, FILE *out, bool is_pretty);

void json_begin_object(JsonWriter *w);
void json_end_object(JsonWriter *w);
void json_begin_array(JsonWriter *w);
void json_end_array(JsonWriter *w);
/* A key inside an object; the next value call writes its value. */
void json_key(JsonWriter *w, const char *key);

void json_string(JsonWriter *w, const char *s);
void json_u64(JsonWriter *w, uint64_t v);
void json_double(JsonWriter *w, double v);
void json_bool(JsonWriter *w, bool v);
void json_null(JsonWriter *w);

/* key + value in one call, for the common case. */
void json_kv_string(JsonWriter *w, const char *key, const char *s);
void json_kv_u64(JsonWriter *w, const char *key, uint64_t v);
void json_kv_double(JsonWriter *w, const char *key, double v);
void json_kv_bool(JsonWriter *w, const char *key, bool v);

#endif
