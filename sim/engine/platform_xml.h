/*
 * platform_xml.h - a Platform record as SimGrid platform XML.
 *
 * One host per GPU (speed: the precision's dense peak x gemm_efficiency), one CPU host per
 * node (speed: cores x CPU-Adam parameter rate, so CPU work is counted in parameters) holding
 * the node's NVMe drives as one striped disk; split-duplex links for NVLink ports, each GPU's
 * PCIe lanes, PCIe switch uplinks, NICs and the fabric: each node's leaf uplink (the per-node
 * model), or the fabric as built (docs/PLATFORM-FORMAT.md): leaf groups sharing an uplink, a
 * spine tier, pods with core uplinks. Routes follow the hardware: GPU-GPU over NVLink (or
 * PCIe through the switch or host), GPU-CPU over its lanes and its switch uplink, GPU to
 * another node over its lanes, the NIC behind its switch, then up the fabric only as far as
 * the two nodes' common switch. Each node is a Full-routed zone inside its leaf group's and
 * pod's Dijkstra-routed zones, so the file grows linearly with the node count.
 * Names: gpu<rank>, cpu<node>, nvme<node>.
 */
#ifndef ZEROSIM_ENGINE_PLATFORM_XML_H
#define ZEROSIM_ENGINE_PLATFORM_XML_H

#include "../inputs/platform.h"

#include <stdio.h>

/* GPU hosts have power states: pstate k is the speed left to compute while k sets of NCCL
 * kernels run on the GPU, each bounded to gpu.comm_sm_fraction of it (engine.c switches
 * them); pstate 0 is the full speed. One per GPU stream that can run a collective, plus 0. */
#define PLATFORM_XML_GPU_PSTATES 6

/* The speed of pstate k for a GPU of `speed` whose kernel sets take `share` each: what
 * SimGrid's max-min sharing gives one unbounded execution beside k executions bounded to
 * share x speed (their bound first, subtracted one by one as its solver does, unless the fair
 * share speed / (k + 1) is lower). */
double platform_xml_gpu_pstate_speed(double speed, double share, unsigned k);

/* Writes the XML for platform p (already validated and resized); GPU speeds use the dense peak
 * of `precision`. */
void platform_xml_write(const Platform *p, Precision precision, FILE *out);

#endif
