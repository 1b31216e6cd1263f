/*
 * sweep_merge.h - the shards of one sweep made into one output (`zerosim sweep --merge`).
 *
 * Every shard file must carry the same sweep header but for its shard index (same zerosim, grid
 * and input files, same shard count: inputs/sweep_header.h), the shards must be 0..N-1 each
 * once, and their rows together must hold every point of the grid exactly once; the merged
 * file has the rows in id order under one header, as a sweep of the whole grid writes it
 * (shard 0/1), so it resumes like one. Anything else is refused with the file and the reason.
 */
#ifndef ZEROSIM_STUDY_SWEEP_MERGE_H
#define ZEROSIM_STUDY_SWEEP_MERGE_H

#include "../common/err.h"
#include "sweep_output.h"

#include <stddef.h>

/* Merges the n_files shard files (all in `format`) into out_path (written whole, then renamed
 * into place). 0, or -1 with err set. */
int sweep_merge(const char *out_path, SweepFormat format, const char *const *files,
                size_t n_files, Err *err);

#endif
