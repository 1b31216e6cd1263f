/*
 * activity.h - a rank's pending SimGrid activities and one wait over all of them.
 *
 * The engine drives every stream of a rank from one actor (engine.c): it starts each op's
 * executions, flows and I/Os asynchronously and then waits for whichever finishes first.
 * SimGrid 3.32's C API waits over executions only or over communications only; a wait over
 * a mix (s4u::Activity::wait_any_for) exists only in its C++ API, so this is the one C++ file
 * of the engine, behind a C interface. Each activity carries the caller's tag (the stream it
 * belongs to). A set is used by one actor only; SimGrid runs actors one at a time.
 */
#ifndef ZEROSIM_ENGINE_ACTIVITY_H
#define ZEROSIM_ENGINE_ACTIVITY_H

#include <simgrid/forward.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What activity_wait_any returns when the deadline came first. */
#define ACTIVITY_NONE UINT32_MAX

typedef struct ActivitySet ActivitySet;

/* An empty set; activity_set_destroy(NULL) is a no-op. Destroying a set with activities still
 * pending drops them (after a deadlock, their actor is gone). */
ActivitySet *activity_set_create(void);
void activity_set_destroy(ActivitySet *set);

/* Activities started and not yet returned by activity_wait_any. */
size_t activity_set_count(const ActivitySet *set);

/* Starts an execution of `flops` on `host` (what sg_actor_execute runs on the actor's own). */
void activity_exec(ActivitySet *set, sg_host_t host, double flops, uint32_t tag);

/* Starts a send of `bytes` (a simulated size, no data) to mailbox `to`, from this actor's
 * host, and a receive on mailbox `from`: sg_mailbox_put_async and sg_mailbox_get_async. */
void activity_put(ActivitySet *set, sg_mailbox_t to, double bytes, uint32_t tag);
void activity_get(ActivitySet *set, sg_mailbox_t from, uint32_t tag);

/* Starts a flow of `bytes` from host `from` to host `to` (what sg_host_sendto waits for). */
void activity_sendto(ActivitySet *set, sg_host_t from, sg_host_t to, double bytes, uint32_t tag);

/* Starts a read (is_read) or write of `bytes` on `disk` (sg_disk_read / sg_disk_write). */
void activity_disk(ActivitySet *set, sg_disk_t disk, int is_read, double bytes, uint32_t tag);

/* Blocks the calling actor until one of the set's activities finishes, removes it and returns
 * its tag; or, with deadline_s >= 0, until SimGrid's clock reaches deadline_s, and returns
 * ACTIVITY_NONE (also when the set is empty). With an empty set and no deadline it returns
 * ACTIVITY_NONE at once. */
uint32_t activity_wait_any(ActivitySet *set, double deadline_s);

#ifdef __cplusplus
}
#endif

#endif
