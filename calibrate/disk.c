/*
 * disk.c - O_DIRECT sequential write/read benchmark with a buffered fallback (see disk.h).
 */
#define _GNU_SOURCE /* O_DIRECT */
#include "disk.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DISK_ALIGN 4096 /* O_DIRECT needs offsets, sizes and buffers aligned to the block size */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Opens path with O_DIRECT when *is_direct, else buffered; a refusal of O_DIRECT (EINVAL)
 * clears *is_direct and retries buffered. */
static int open_file(const char *path, int flags, bool *is_direct)
{
    if (*is_direct) {
        int fd = open(path, flags | O_DIRECT, 0600);
        if (fd >= 0 || errno != EINVAL)
            return fd;
        *is_direct = false;
    }
    return open(path, flags, 0600);
}

static int write_all(int fd, const char *buf, uint64_t file_bytes, uint64_t block_bytes)
{
    for (uint64_t done = 0; done < file_bytes; done += block_bytes) {
        size_t left = (size_t)block_bytes, off = 0;
        while (left > 0) {
            ssize_t got = write(fd, buf + off, left);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                return -1;
            left -= (size_t)got, off += (size_t)got;
        }
    }
    return fsync(fd);
}

static int read_all(int fd, char *buf, uint64_t file_bytes, uint64_t block_bytes)
{
    uint64_t done = 0;
    while (done < file_bytes) {
        ssize_t got = read(fd, buf, (size_t)block_bytes);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return -1;
        done += (uint64_t)got;
    }
    return 0;
}

/* One timed pass; returns seconds, or a negative value with err set. */
static double timed_pass(const char *path, bool is_write, char *buf, uint64_t file_bytes,
                         uint64_t block_bytes, bool *is_direct, Err *err)
{
    int fd = open_file(path, is_write ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY, is_direct);
    if (fd < 0)
        return err_set(err, "%s: cannot open for %s: %s", path, is_write ? "writing" : "reading",
                       strerror(errno));
    if (!is_write && !*is_direct) /* buffered: drop what the write left in the page cache */
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    double t0 = now_s();
    int rc = is_write ? write_all(fd, buf, file_bytes, block_bytes)
                      : read_all(fd, buf, file_bytes, block_bytes);
    double dt = now_s() - t0;
    int saved = errno;
    if (is_write && rc == 0 && !*is_direct)
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    if (rc != 0 && saved == EINVAL && *is_direct) {
        /* Some file systems accept O_DIRECT at open and refuse it at the first transfer. */
        *is_direct = false;
        return timed_pass(path, is_write, buf, file_bytes, block_bytes, is_direct, err);
    }
    if (rc != 0)
        return err_set(err, "%s: %s failed after fewer than %llu bytes: %s", path,
                       is_write ? "write" : "read", (unsigned long long)file_bytes,
                       saved ? strerror(saved) : "unexpected end of file");
    return dt > 0 ? dt : 1e-9;
}

int disk_bench(const char *dir, uint64_t file_bytes, uint64_t block_bytes, uint32_t reps,
               SampleSet *out, Err *err)
{
    if (file_bytes == 0)
        return err_set(err, "disk: file size: expected at least 1 byte, got 0");
    if (block_bytes == 0 || block_bytes % DISK_ALIGN != 0)
        return err_set(err, "disk: block size: expected a multiple of %d bytes, got %llu",
                       DISK_ALIGN, (unsigned long long)block_bytes);
    if (reps == 0 || reps > SAMPLE_MAX_REPS)
        return err_set(err, "disk: repetitions: expected 1 to %d, got %u", SAMPLE_MAX_REPS, reps);
    struct stat st;
    if (stat(dir, &st) != 0)
        return err_set(err, "%s: expected a directory for the disk benchmark, got %s", dir,
                       strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return err_set(err, "%s: expected a directory for the disk benchmark, got a file", dir);
    if (file_bytes < block_bytes) /* a small file: one block of the file's size */
        block_bytes = (file_bytes + DISK_ALIGN - 1) / DISK_ALIGN * DISK_ALIGN;
    file_bytes = (file_bytes + block_bytes - 1) / block_bytes * block_bytes;

    char path[1024];
    snprintf(path, sizeof path, "%s/zerosim-calibrate-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return err_set(err, "%s: cannot create a file for the disk benchmark: %s", dir,
                       strerror(errno));
    close(fd);
    char *buf = NULL;
    if (posix_memalign((void **)&buf, DISK_ALIGN, (size_t)block_bytes) != 0) {
        unlink(path);
        return err_set(err, "disk: cannot allocate a %llu-byte block",
                       (unsigned long long)block_bytes);
    }
    /* Not zeros: some drives and file systems compress or deduplicate. */
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i + 8 <= (size_t)block_bytes; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(buf + i, &x, 8);
    }

    bool is_direct = true;
    double write_s[SAMPLE_MAX_REPS], read_s[SAMPLE_MAX_REPS];
    int rc = 0;
    /* One untimed write allocates the file's blocks, so the timed ones overwrite in place. */
    if (timed_pass(path, true, buf, file_bytes, block_bytes, &is_direct, err) < 0)
        rc = -1;
    for (uint32_t r = 0; rc == 0 && r < reps; r++) {
        write_s[r] = timed_pass(path, true, buf, file_bytes, block_bytes, &is_direct, err);
        read_s[r] = write_s[r] < 0
                        ? -1
                        : timed_pass(path, false, buf, file_bytes, block_bytes, &is_direct, err);
        if (write_s[r] < 0 || read_s[r] < 0)
            rc = -1;
    }
    unlink(path);
    free(buf);
    if (rc != 0)
        return -1;
    char label[48];
    snprintf(label, sizeof label, "%s", is_direct ? "o_direct" : "buffered");
    samples_add(out, SAMPLE_DISK, 1, label, block_bytes, (double)file_bytes, 1, write_s, reps);
    samples_add(out, SAMPLE_DISK, 0, label, block_bytes, (double)file_bytes, 1, read_s, reps);
    snprintf(out->meta.disk.dir, sizeof out->meta.disk.dir, "%s", dir);
    out->meta.disk.is_direct = is_direct;
    if (!is_direct)
        snprintf(out->meta.disk.note, sizeof out->meta.disk.note,
                 "O_DIRECT refused by the file system of %s: buffered I/O with fsync and "
                 "POSIX_FADV_DONTNEED; reads may come from the page cache",
                 dir);
    return 0;
}
