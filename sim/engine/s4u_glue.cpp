/*
 * s4u_glue.cpp - SimGrid's s4u calls behind a C interface (see s4u_glue.h).
 *
 * The one C++ file of zerosim: the s4u operation and nothing else.
 */
#include "s4u_glue.h"

#include <simgrid/s4u/Comm.hpp>

#include <cstdint>

sg_comm_t s4u_glue_sendto_async(sg_host_t from, sg_host_t to, double bytes)
{
    simgrid::s4u::CommPtr comm = simgrid::s4u::Comm::sendto_init(from, to);
    comm->set_payload_size(static_cast<uint64_t>(bytes));
    comm->start();
    comm->add_ref(); /* the C handle's reference, which sg_comm_wait* releases */
    return comm.get();
}
