/*
 * zero3_walk.c - DeepSpeed ZeRO-3's fetch, prefetch and release over one layer (see
 * zero3_walk.h).
 *
 * The trace is the layer's gathered parameters repeated over enough identical layers that a
 * prefetch window starting in the reported layer never runs past the end; the reported layer
 * is one whose predecessors already ran, so it sees the steady-state prefetch (a model far
 * smaller than stage3_max_live_parameters would have the whole of it gathered; the walk
 * assumes a model at least that long, and reports the window's layers alive).
 */
#include "zero3_walk.h"

#include "../common/xalloc.h"

#include <string.h>

typedef struct TraceParam {
    double elems;
    uint32_t module; /* its module's position in the pass */
} TraceParam;

void zero3_walk(const ParamModule *modules, size_t n_modules, uint64_t persistence_threshold,
                uint64_t prefetch_bucket, uint64_t max_live, bool is_backward,
                unsigned param_bytes, unsigned grad_bytes, Zero3Walk *out)
{
    memset(out, 0, sizeof *out);
    /* one layer's gathered parameters in the order the pass meets them */
    TraceParam layer[2 * PARAMS_MAX_MODULES];
    double module_grad[PARAMS_MAX_MODULES];
    size_t n_params = 0;
    for (size_t k = 0; k < n_modules; k++) {
        const ParamModule *m = &modules[is_backward ? n_modules - 1 - k : k];
        module_grad[k] = (double)(m->weight + m->bias);
        if (m->weight > persistence_threshold)
            layer[n_params++] = (TraceParam){(double)m->weight, (uint32_t)k};
        if (m->bias > persistence_threshold)
            layer[n_params++] = (TraceParam){(double)m->bias, (uint32_t)k};
    }
    for (size_t i = 0; i < n_params; i++)
        out->gathered_elems += layer[i].elems;
    if (n_params == 0) {
        double largest = 0.0; /* nothing gathered: only the gradients */
        for (size_t k = 0; k < n_modules && is_backward; k++)
            if (module_grad[k] > largest)
                largest = module_grad[k];
        out->live_peak_bytes = largest * grad_bytes;
        return;
    }
    /* Layers a prefetch window may span, before and after the reported one: prefetches
     * accumulate (each fetch takes up to a bucket more) until stage3_max_live_parameters
     * elements are available, so the window reaches that far ahead. */
    double window = prefetch_bucket > 0 ? (double)max_live : 0.0;
    size_t span = (size_t)(window / out->gathered_elems) + 2;
    if (span > 4096)
        span = 4096;
    const size_t n_layers = 2 * span + 1, reported = span, total = n_layers * n_params;
    bool *available = xcalloc(total, sizeof *available);
    double avail_elems = 0.0;
    size_t queue = 0; /* the next parameter of the trace not yet popped */
    for (size_t l = 0; l < n_layers; l++) {
        const bool is_reported = l == reported;
        size_t i = l * n_params;
        while (i < (l + 1) * n_params) {
            const uint32_t module = layer[i % n_params].module;
            size_t end = i;
            while (end < (l + 1) * n_params && layer[end % n_params].module == module)
                end++;
            /* fetch_sub_module: what is not yet available, on demand, in one call */
            bool fetched = false;
            for (size_t j = i; j < end; j++) {
                if (available[j]) {
                    if (is_reported)
                        out->early_elems += layer[j % n_params].elems;
                    continue;
                }
                available[j] = true;
                avail_elems += layer[j % n_params].elems;
                fetched = true;
            }
            if (fetched && is_reported)
                out->calls_late++;
            if (is_reported)
                out->n_fetched_modules++;
            if (queue < end)
                queue = end;
            /* the prefetch of the next parameters of the trace */
            double limit = (double)max_live - avail_elems;
            if (limit > (double)prefetch_bucket)
                limit = (double)prefetch_bucket;
            double taken = 0.0;
            while (prefetch_bucket > 0 && queue < total && taken < limit) {
                if (!available[queue]) {
                    available[queue] = true;
                    avail_elems += layer[queue % n_params].elems;
                    taken += layer[queue % n_params].elems;
                }
                queue++;
            }
            if (taken > 0 && is_reported)
                out->calls_early++;
            /* the module computes: its gathered parameters, the prefetched ones and, in
             * backward, its gradients */
            double live = avail_elems * param_bytes +
                          (is_backward ? module_grad[module] * grad_bytes : 0.0);
            if (is_reported && live > out->live_peak_bytes)
                out->live_peak_bytes = live;
            /* release_sub_module */
            for (size_t j = i; j < end; j++) {
                available[j] = false;
                avail_elems -= layer[j % n_params].elems;
            }
            i = end;
        }
    }
    free(available);
}
