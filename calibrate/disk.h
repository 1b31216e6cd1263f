/*
 * disk.h - sequential write and read bandwidth of a directory's file system (NVMe offload).
 *
 * ZeRO-Infinity streams optimizer state and parameters to NVMe in large aligned blocks with
 * O_DIRECT (DeepSpeed's aio library), bypassing the page cache. This benchmark does the same
 * with plain read/write: a temporary file in the directory is written in large blocks and
 * fsync'd, then read back, each repetition timed. File systems that refuse O_DIRECT (tmpfs,
 * some overlay and network file systems) fall back to buffered I/O with fsync and
 * POSIX_FADV_DONTNEED, and the fallback is recorded: buffered reads may still be served from
 * the page cache and overstate the device.
 */
#ifndef ZEROSIM_CALIBRATE_DISK_H
#define ZEROSIM_CALIBRATE_DISK_H

#include "common/err.h"
#include "samples.h"

#include <stdint.h>

/* Writes then reads a file of file_bytes (rounded up to whole blocks of block_bytes, a
 * multiple of 4096; a file smaller than a block is one block of its size) in dir, `reps` times each
 * after one untimed write, adding a "write" and a "read" SAMPLE_DISK sample and filling
 * out->meta.disk (dir, is_direct, note). The file is removed afterwards. Fails when the directory
 * cannot hold it. */
int disk_bench(const char *dir, uint64_t file_bytes, uint64_t block_bytes, uint32_t reps,
               SampleSet *out, Err *err);

#endif
