/*
 * platform_xml.c - SimGrid platform XML from a Platform (see platform_xml.h).
 *
 * Link latencies: NVLink ports and NICs carry half the platform's end-to-end latency each way
 * (a route crosses two ports), PCIe lanes and uplinks carry the figure given for them, and
 * each leaf uplink half the fabric latency. A route's latency is the sum over its links.
 */
#include "platform_xml.h"

#include "topology.h"

static void link(FILE *out, const char *id, double bw, double lat)
{
    fprintf(out,
            "    <link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" "
            "sharing_policy=\"SPLITDUPLEX\"/>\n",
            id, bw, lat);
}

/* <link_ctn> to link "<prefix><a>" in direction dir ("UP" or "DOWN"). */
static void ctn(FILE *out, const char *dir, const char *prefix, unsigned a)
{
    fprintf(out, "<link_ctn id=\"%s%u\" direction=\"%s\"/>", prefix, a, dir);
}

/* <link_ctn> to link "<prefix><a>_<b>". */
static void ctn2(FILE *out, const char *dir, const char *prefix, unsigned a, unsigned b)
{
    fprintf(out, "<link_ctn id=\"%s%u_%u\" direction=\"%s\"/>", prefix, a, b, dir);
}

static void gpu_gpu_route(const Platform *p, FILE *out, unsigned k, unsigned ra, unsigned rb)
{
    fprintf(out, "    <route src=\"gpu%u\" dst=\"gpu%u\" symmetrical=\"NO\">", ra, rb);
    if (p->has_nvlink && p->has_nvswitch) {
        ctn(out, "UP", "nv", ra);
        ctn(out, "DOWN", "nv", rb);
    } else if (p->has_nvlink) {
        /* Direct links: the pair's own link (the lower rank first in its name). */
        unsigned lo = ra < rb ? ra : rb, hi = ra < rb ? rb : ra;
        ctn2(out, ra < rb ? "UP" : "DOWN", "nv", lo, hi);
    } else {
        unsigned sa = topology_switch(p, ra), sb = topology_switch(p, rb);
        ctn(out, "UP", "pcie", ra);
        if (sa != sb) {
            ctn2(out, "UP", "up", k, sa);
            ctn2(out, "DOWN", "up", k, sb);
        }
        ctn(out, "DOWN", "pcie", rb);
    }
    fprintf(out, "</route>\n");
}

double platform_xml_gpu_pstate_speed(double speed, double share, unsigned k)
{
    const double bound = share * speed, fair = speed / (double)(k + 1);
    if (bound >= fair)
        return fair;
    double left = speed;
    for (unsigned i = 0; i < k; i++)
        left -= bound;
    return left;
}

static void write_node(const Platform *p, FILE *out, unsigned k, double gpu_speed, double cpu_speed)
{
    const unsigned g = (unsigned)p->gpus_per_node;
    const unsigned first = k * g;
    const unsigned n_switches = g / (unsigned)p->pcie.gpus_per_switch;
    char id[64];
    fprintf(out, "  <zone id=\"node%u\" routing=\"Full\">\n", k);
    for (unsigned r = first; r < first + g; r++) {
        fprintf(out, "    <host id=\"gpu%u\" speed=\"", r);
        for (unsigned ps = 0; ps < PLATFORM_XML_GPU_PSTATES; ps++)
            fprintf(out, "%s%.17gf", ps ? "," : "",
                    platform_xml_gpu_pstate_speed(gpu_speed, p->gpu.comm_sm_fraction, ps));
        fprintf(out, "\"/>\n");
    }
    fprintf(out, "    <host id=\"cpu%u\" speed=\"%.17gf\" core=\"1\">", k, cpu_speed);
    if (p->nvme.n_drives > 0)
        fprintf(out, "<disk id=\"nvme%u\" read_bw=\"%.17gBps\" write_bw=\"%.17gBps\"/>", k,
                p->nvme.read_bw_bytes_per_s_per_drive * (double)p->nvme.n_drives,
                p->nvme.write_bw_bytes_per_s_per_drive * (double)p->nvme.n_drives);
    fprintf(out, "</host>\n");
    fprintf(out, "    <router id=\"gw%u\"/>\n", k);
    for (unsigned r = first; r < first + g; r++) {
        snprintf(id, sizeof id, "pcie%u", r);
        link(out, id, p->pcie.gpu_link.bw_bytes_per_s, p->pcie.gpu_link.latency_s);
        if (p->has_nvlink && p->has_nvswitch) {
            snprintf(id, sizeof id, "nv%u", r);
            link(out, id, p->nvlink.bw_bytes_per_s, p->nvlink.latency_s / 2.0);
        } else if (p->has_nvlink) {
            for (unsigned q = r + 1; q < first + g; q++) {
                snprintf(id, sizeof id, "nv%u_%u", r, q);
                link(out, id, p->nvlink.bw_bytes_per_s / (double)(g > 1 ? g - 1 : 1),
                     p->nvlink.latency_s);
            }
        }
    }
    for (unsigned s = 0; s < n_switches; s++) {
        snprintf(id, sizeof id, "up%u_%u", k, s);
        link(out, id, p->pcie.switch_uplink.bw_bytes_per_s, p->pcie.switch_uplink.latency_s);
    }
    for (unsigned n = 0; n < (unsigned)p->nic.per_node; n++) {
        snprintf(id, sizeof id, "nic%u_%u", k, n);
        link(out, id, p->nic.link.bw_bytes_per_s, p->nic.link.latency_s / 2.0);
    }
    for (unsigned ra = first; ra < first + g; ra++)
        for (unsigned rb = first; rb < first + g; rb++)
            if (ra != rb)
                gpu_gpu_route(p, out, k, ra, rb);
    for (unsigned r = first; r < first + g; r++) {
        unsigned s = topology_switch(p, r), nic = topology_nic(p, r);
        fprintf(out, "    <route src=\"gpu%u\" dst=\"cpu%u\" symmetrical=\"NO\">", r, k);
        ctn(out, "UP", "pcie", r);
        ctn2(out, "UP", "up", k, s);
        fprintf(out, "</route>\n    <route src=\"cpu%u\" dst=\"gpu%u\" symmetrical=\"NO\">", k, r);
        ctn2(out, "DOWN", "up", k, s);
        ctn(out, "DOWN", "pcie", r);
        /* GPUDirect RDMA: GPU -> its switch -> NIC; NICs on the root complex add the uplink. */
        fprintf(out, "</route>\n    <route src=\"gpu%u\" dst=\"gw%u\" symmetrical=\"NO\">", r, k);
        ctn(out, "UP", "pcie", r);
        if (p->pcie.nics_per_switch == 0)
            ctn2(out, "UP", "up", k, s);
        ctn2(out, "UP", "nic", k, nic);
        fprintf(out, "</route>\n    <route src=\"gw%u\" dst=\"gpu%u\" symmetrical=\"NO\">", k, r);
        ctn2(out, "DOWN", "nic", k, nic);
        if (p->pcie.nics_per_switch == 0)
            ctn2(out, "DOWN", "up", k, s);
        ctn(out, "DOWN", "pcie", r);
        fprintf(out, "</route>\n");
    }
    fprintf(out, "    <route src=\"cpu%u\" dst=\"gw%u\" symmetrical=\"NO\">", k, k);
    ctn2(out, "UP", "nic", k, 0);
    fprintf(out, "</route>\n    <route src=\"gw%u\" dst=\"cpu%u\" symmetrical=\"NO\">", k, k);
    ctn2(out, "DOWN", "nic", k, 0);
    fprintf(out, "</route>\n  </zone>\n");
}

void platform_xml_write(const Platform *p, Precision precision, FILE *out)
{
    const unsigned n_nodes = (unsigned)p->n_nodes;
    double gpu_speed = platform_peak_flops_per_s(p, precision) * p->gpu.gemm_efficiency;
    double cpu_speed = (double)p->cpu.cores * p->cpu.adam_params_per_s_per_core;
    /* The leaf uplink carries all of a node's NICs, divided by the oversubscription. */
    double leaf_bw =
        (double)p->nic.per_node * p->nic.link.bw_bytes_per_s / p->fabric.oversubscription;

    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n"
                 "<zone id=\"root\" routing=\"DijkstraCache\">\n");
    for (unsigned k = 0; k < n_nodes; k++)
        write_node(p, out, k, gpu_speed, cpu_speed);
    fprintf(out, "  <zone id=\"fabric\" routing=\"Full\">\n    <router id=\"spine\"/>\n"
                 "  </zone>\n");
    for (unsigned k = 0; k < n_nodes; k++) {
        char id[64];
        snprintf(id, sizeof id, "leaf%u", k);
        link(out, id, leaf_bw, p->fabric.latency_s / 2.0);
    }
    for (unsigned k = 0; k < n_nodes; k++) {
        fprintf(out,
                "  <zoneRoute src=\"node%u\" dst=\"fabric\" gw_src=\"gw%u\" "
                "gw_dst=\"spine\" symmetrical=\"NO\">",
                k, k);
        ctn(out, "UP", "leaf", k);
        fprintf(out,
                "</zoneRoute>\n  <zoneRoute src=\"fabric\" dst=\"node%u\" gw_src=\"spine\" "
                "gw_dst=\"gw%u\" symmetrical=\"NO\">",
                k, k);
        ctn(out, "DOWN", "leaf", k);
        fprintf(out, "</zoneRoute>\n");
    }
    fprintf(out, "</zone>\n</platform>\n");
}
