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

/* Writes the XML for platform p (already validated and resized); GPU speeds use the dense peak
 * of `precision`. */
void platform_xml_write(const Platform *p, Precision precision, FILE *out);

#endif
