/*
 * s4u_glue.h - the few SimGrid 3.32 operations the C API lacks, for engine.c.
 *
 * SimGrid's C API has no asynchronous host-to-host flow, only the blocking sg_host_sendto;
 * its C++ s4u API has one (s4u::Comm::sendto_init). This shim calls it and hands back the C
 * API's handle with the reference the C wait functions consume (SimGrid's src/s4u/s4u_Comm.cpp
 * C interface: a handle returned to C holds one reference, which sg_comm_wait* releases). Part of
 * the engine, the only folder that includes SimGrid; everything else in the engine stays C.
 */
#ifndef ZEROSIM_ENGINE_S4U_GLUE_H
#define ZEROSIM_ENGINE_S4U_GLUE_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts a flow of `bytes` from host `from` to host `to` over their route, with no mailbox and
 * no receiving actor (s4u::Comm::sendto_init). The caller waits on it (sg_comm_wait_any,
 * sg_comm_wait_all), which releases the handle. */
sg_comm_t s4u_glue_sendto_async(sg_host_t from, sg_host_t to, double bytes);

#ifdef __cplusplus
}
#endif

#endif
