/*
 * grid_report.c - a sweep point's report read back into a CSV row's metrics and a JSONL row
 * (see grid_report.h).
 */
#include "grid_report.h"

#include "../common/xalloc.h"
#include "grid_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- reports and rows ---- */

size_t grid_n_metrics(const Grid *g)
{
    return g->n_metrics;
}

const char *grid_metric_name(const Grid *g, size_t k)
{
    return g->metrics[k];
}

int grid_report_read(GridReport *out, const Grid *g, const GridInvocation *inv, const char *text,
                     size_t n_bytes, Err *err)
{
    out->json = NULL;
    strlist_init(&out->metrics);
    cJSON *root = jsonfile_parse("the report", text, n_bytes, err);
    if (root == NULL)
        return -1;
    const cJSON *command = cJSON_GetObjectItemCaseSensitive(root, "command");
    if (!cJSON_IsObject(root) || !cJSON_IsString(command) ||
        strcmp(command->valuestring, grid_command_name(g)) != 0) {
        cJSON_Delete(root);
        return err_set(err, "the report: command: expected \"%s\", got something else",
                       grid_command_name(g));
    }
    /* The derived config is a temporary file: name the one it stands for. */
    cJSON *config = cJSON_GetObjectItemCaseSensitive(root, "config");
    if (inv->derived_config[0] && cJSON_IsObject(config))
        cJSON_ReplaceItemInObjectCaseSensitive(config, "file",
                                               cJSON_CreateString(inv->source_config));
    for (size_t k = 0; k < g->n_metrics; k++) {
        const cJSON *v = grid_walk(root, g->metrics[k]);
        char buf[64] = "";
        if (cJSON_IsNumber(v))
            grid_format_number(v->valuedouble, buf, sizeof buf);
        else if (cJSON_IsBool(v))
            snprintf(buf, sizeof buf, "%s", cJSON_IsTrue(v) ? "true" : "false");
        else if (cJSON_IsString(v))
            snprintf(buf, sizeof buf, "%s", v->valuestring);
        strlist_addf(&out->metrics, "%s", buf);
    }
    out->json = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (out->json == NULL)
        return err_set(err, "the report: cannot be printed again (out of memory)");
    return 0;
}

void grid_report_fini(GridReport *r)
{
    if (r == NULL)
        return;
    free(r->json); /* cJSON's default allocator is malloc */
    r->json = NULL;
    strlist_fini(&r->metrics);
}

char *grid_jsonl_row(const Grid *g, size_t id, const char *status, int exit_code,
                     const char *message, const GridReport *report)
{
    cJSON *row = cJSON_CreateObject();
    cJSON_AddNumberToObject(row, "id", (double)grid_point_id(g, id));
    char *key = grid_point_key(g, id);
    cJSON_AddStringToObject(row, "key", key);
    free(key);
    cJSON *point = cJSON_AddObjectToObject(row, "point");
    cJSON_AddStringToObject(point, "command", grid_command_name(g));
    cJSON *overrides = g->first_override < g->n_dims ? cJSON_CreateObject() : NULL;
    for (size_t k = 0; k < g->n_dims; k++) {
        const Dim *d = &g->dims[k];
        size_t i = grid_value_index(g, id, k);
        if (d->spec->kind == KIND_NUMBER)
            cJSON_AddNumberToObject(overrides, d->path, d->numbers[i]);
        else if (d->spec->kind == KIND_COUNT)
            cJSON_AddNumberToObject(point, d->column, d->numbers[i]);
        else
            cJSON_AddStringToObject(point, d->column, d->texts[i]);
    }
    if (overrides != NULL)
        cJSON_AddItemToObject(point, "overrides", overrides);
    cJSON_AddStringToObject(row, "status", status);
    cJSON_AddNumberToObject(row, "exit_code", exit_code);
    if (message != NULL && message[0])
        cJSON_AddStringToObject(row, "message", message);
    else
        cJSON_AddNullToObject(row, "message");
    cJSON *parsed = report && report->json ? cJSON_Parse(report->json) : NULL;
    cJSON_AddItemToObject(row, "report", parsed ? parsed : cJSON_CreateNull());
    char *text = cJSON_PrintUnformatted(row);
    cJSON_Delete(row);
    if (text == NULL) {
        fputs("zerosim: out of memory printing a JSONL row\n", stderr);
        abort();
    }
    return text;
}

int grid_jsonl_read(const char *line, size_t n_bytes, uint64_t *out_id, char **out_key,
                    char **out_status)
{
    cJSON *row = cJSON_ParseWithLength(line, n_bytes);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(row, "id");
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(row, "key");
    const cJSON *status = cJSON_GetObjectItemCaseSensitive(row, "status");
    int rc = -1;
    if (cJSON_IsObject(row) && cJSON_IsNumber(id) && id->valuedouble >= 0 &&
        id->valuedouble < 9007199254740992.0 && id->valuedouble == (double)(uint64_t)id->valuedouble &&
        cJSON_IsString(key) && cJSON_IsString(status)) {
        *out_id = (uint64_t)id->valuedouble;
        *out_key = xstrdup(key->valuestring);
        *out_status = xstrdup(status->valuestring);
        rc = 0;
    }
    cJSON_Delete(row);
    return rc;
}

int grid_jsonl_key(const char *line, size_t n_bytes, char **out_key)
{
    uint64_t id;
    char *status = NULL;
    int rc = grid_jsonl_read(line, n_bytes, &id, out_key, &status);
    free(status);
    return rc;
}
