/*
 * platform_xml.c - SimGrid platform XML from a Platform (see platform_xml.h).
 *
 * Link latencies: NVLink ports and NICs carry half the platform's end-to-end latency each way
 * (a route crosses two ports), PCIe lanes and uplinks carry the figure given for them, and
 * each leaf uplink half the fabric latency (per-node model). On a fabric as built the NIC
 * links carry half of NIC plus fabric latency and the fabric's links none, so that every
 * inter-node route has the same latency whichever tiers it crosses (fabric.latency_s is the
 * typical path's, docs/PLATFORM-FORMAT.md). A route's latency is the sum over its links.
 *
 * Every link is declared in the root zone, before the zones that use it: SimGrid 3.32 finds a
 * route's <link_ctn> by name from the root, searching each zone's own links and then its
 * children depth-first (NetZoneImpl::get_link_by_name_or_null), so links declared inside
 * node zones cost a walk over every earlier node per lookup: quadratic loading (5 s at 4,096
 * GPUs). Found in the root's own table, each lookup is one hash probe.
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

/* A zero-latency link on the fabric (its latency is carried by the NIC links). */
static void fabric_link(FILE *out, const char *prefix, unsigned a, double bw)
{
    char id[64];
    snprintf(id, sizeof id, "%s%u", prefix, a);
    link(out, id, bw, 0.0);
}

/* Node k's links: GPU lanes, NVLink ports, PCIe switch uplinks, NICs. */
static void write_node_links(const Platform *p, FILE *out, unsigned k, double nic_latency_s)
{
    const unsigned g = (unsigned)p->gpus_per_node;
    const unsigned first = k * g;
    const unsigned n_switches = g / (unsigned)p->pcie.gpus_per_switch;
    char id[64];
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
        link(out, id, p->nic.link.bw_bytes_per_s, nic_latency_s);
    }
}

/* GPU speed: a straggler (the whole node, or one GPU) computes `slowdown` times slower. */
static double gpu_host_speed(const Platform *p, unsigned rank, double gpu_speed)
{
    if (!p->job.has_straggler)
        return gpu_speed;
    const uint64_t who = p->job.is_straggler_node ? topology_node(p, rank) : rank;
    return who == p->job.straggler_index ? gpu_speed / p->job.straggler_slowdown : gpu_speed;
}

/* Node k's zone: its hosts, gateway router and routes (its links are in the root). */
static void write_node(const Platform *p, FILE *out, unsigned k, double gpu_speed, double cpu_speed)
{
    const unsigned g = (unsigned)p->gpus_per_node;
    const unsigned first = k * g;
    fprintf(out, "  <zone id=\"node%u\" routing=\"Full\">\n", k);
    for (unsigned r = first; r < first + g; r++) {
        /* power states: the speed left to compute beside k NCCL kernels (engine.c) */
        const double speed = gpu_host_speed(p, r, gpu_speed);
        fprintf(out, "    <host id=\"gpu%u\" speed=\"", r);
        for (unsigned ps = 0; ps < PLATFORM_XML_GPU_PSTATES; ps++)
            fprintf(out, "%s%.17gf", ps ? "," : "",
                    platform_xml_gpu_pstate_speed(speed, p->gpu.comm_sm_fraction, ps));
        fprintf(out, "\"/>\n");
    }
    fprintf(out, "    <host id=\"cpu%u\" speed=\"%.17gf\" core=\"1\">", k, cpu_speed);
    if (p->nvme.n_drives > 0)
        fprintf(out, "<disk id=\"nvme%u\" read_bw=\"%.17gBps\" write_bw=\"%.17gBps\"/>", k,
                p->nvme.read_bw_bytes_per_s_per_drive * (double)p->nvme.n_drives,
                p->nvme.write_bw_bytes_per_s_per_drive * (double)p->nvme.n_drives);
    fprintf(out, "</host>\n");
    fprintf(out, "    <router id=\"gw%u\"/>\n", k);
    for (unsigned ra = first; ra < first + g; ra++)
        for (unsigned rb = first; rb < first + g; rb++)
            if (ra != rb)
                gpu_gpu_route(p, out, k, ra, rb);
    for (unsigned r = first; r < first + g; r++) {
        unsigned s = topology_switch(p, r), nic = topology_nic(p, r);
        unsigned nic_in = topology_nic_in(p, r);
        fprintf(out, "    <route src=\"gpu%u\" dst=\"cpu%u\" symmetrical=\"NO\">", r, k);
        ctn(out, "UP", "pcie", r);
        ctn2(out, "UP", "up", k, s);
        fprintf(out, "</route>\n    <route src=\"cpu%u\" dst=\"gpu%u\" symmetrical=\"NO\">", k, r);
        ctn2(out, "DOWN", "up", k, s);
        ctn(out, "DOWN", "pcie", r);
        /* GPUDirect RDMA: GPU -> its switch -> NIC; NICs on the root complex add the uplink.
         * Under cross-NIC rings traffic arrives through the next NIC (topology_nic_in) and is
         * taken to the GPU over its own lanes. */
        fprintf(out, "</route>\n    <route src=\"gpu%u\" dst=\"gw%u\" symmetrical=\"NO\">", r, k);
        ctn(out, "UP", "pcie", r);
        if (p->pcie.nics_per_switch == 0)
            ctn2(out, "UP", "up", k, s);
        ctn2(out, "UP", "nic", k, nic);
        fprintf(out, "</route>\n    <route src=\"gw%u\" dst=\"gpu%u\" symmetrical=\"NO\">", k, r);
        ctn2(out, "DOWN", "nic", k, nic_in);
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

/* A switch: a zone holding one router, which zones below it route through. */
static void switch_zone(FILE *out, const char *zone, unsigned a, const char *router)
{
    fprintf(out, "  <zone id=\"%s%u\" routing=\"Full\"><router id=\"%s%u\"/></zone>\n", zone, a,
            router, a);
}

/* zoneRoutes from zone <src><a> (gateway <gw><a>) up to the switch zone <sw><b> (router
 * <swr><b>) and back down, through links up[] going up and the same links DOWN reversed. */
static void zone_routes(FILE *out, const char *src, const char *gw, unsigned a, const char *sw,
                        const char *swr, unsigned b, const char *const *up, const unsigned *up_i,
                        unsigned n_up)
{
    fprintf(out,
            "  <zoneRoute src=\"%s%u\" dst=\"%s%u\" gw_src=\"%s%u\" gw_dst=\"%s%u\" "
            "symmetrical=\"NO\">",
            src, a, sw, b, gw, a, swr, b);
    for (unsigned i = 0; i < n_up; i++)
        ctn(out, "UP", up[i], up_i[i]);
    fprintf(out,
            "</zoneRoute>\n  <zoneRoute src=\"%s%u\" dst=\"%s%u\" gw_src=\"%s%u\" gw_dst=\"%s%u\" "
            "symmetrical=\"NO\">",
            sw, b, src, a, swr, b, gw, a);
    for (unsigned i = n_up; i-- > 0;)
        ctn(out, "DOWN", up[i], up_i[i]);
    fprintf(out, "</zoneRoute>\n");
}

/* The per-node model (no fabric.nodes_per_leaf): every node's NICs into one leaf uplink,
 * divided by the oversubscription, into a spine without a limit of its own. */
static void write_per_node_fabric(const Platform *p, FILE *out, double gpu_speed,
                                  double cpu_speed)
{
    const unsigned n_nodes = (unsigned)p->n_nodes;
    double leaf_bw =
        (double)p->nic.per_node * p->nic.link.bw_bytes_per_s / p->fabric.oversubscription;
    fprintf(out, "  <zone id=\"links\" routing=\"Full\">\n");
    for (unsigned k = 0; k < n_nodes; k++) {
        write_node_links(p, out, k, p->nic.link.latency_s / 2.0);
        char id[64];
        snprintf(id, sizeof id, "leaf%u", k);
        link(out, id, leaf_bw, p->fabric.latency_s / 2.0);
    }
    fprintf(out, "  </zone>\n");
    for (unsigned k = 0; k < n_nodes; k++)
        write_node(p, out, k, gpu_speed, cpu_speed);
    switch_zone(out, "fabric", 0, "spine");
    const char *const up[] = {"leaf"};
    for (unsigned k = 0; k < n_nodes; k++) {
        const unsigned up_i[] = {k};
        zone_routes(out, "node", "gw", k, "fabric", "spine", 0, up, up_i, 1);
    }
}

/* The nodes of leaf group g, in job order. */
static void write_group_nodes(const Platform *p, FILE *out, unsigned g, double gpu_speed,
                              double cpu_speed)
{
    for (unsigned k = 0; k < (unsigned)p->n_nodes; k++)
        if (topology_node_group(p, k) == g)
            write_node(p, out, k, gpu_speed, cpu_speed);
}

/* The fabric as built: leaf groups (a zone each, whose nodes meet at the leaf switch without
 * leaving it), each with an uplink into its pod's spine tier; pods, when there are several,
 * with an uplink into the core. Under cross-rail hops every node routes to the spine itself
 * (through its group's uplink), since a hop that changes rail leaves the leaf. */
static void write_built_fabric(const Platform *p, FILE *out, double gpu_speed, double cpu_speed)
{
    const unsigned n_nodes = (unsigned)p->n_nodes;
    const unsigned npl = (unsigned)p->fabric.nodes_per_leaf;
    const unsigned n_groups = (unsigned)platform_n_leaf_groups(p);
    const unsigned groups_per_pod =
        p->fabric.nodes_per_pod ? (unsigned)(p->fabric.nodes_per_pod / npl) : n_groups;
    const unsigned n_pods = (n_groups + groups_per_pod - 1) / groups_per_pod;
    const bool has_pods = p->fabric.nodes_per_pod > 0 && n_pods > 1;
    const bool is_flat = topology_hops_cross_rails(p);
    /* Capacities as built: a partly filled leaf or pod keeps its full ports. */
    const double node_bw = (double)p->nic.per_node * p->nic.link.bw_bytes_per_s;
    const double leaf_up_bw = (double)npl * node_bw / p->fabric.oversubscription;
    const double spine_bw =
        (double)groups_per_pod * leaf_up_bw / p->fabric.spine_oversubscription;
    const double pod_up_bw = spine_bw / p->fabric.core_oversubscription;
    const bool has_spine_link = p->fabric.spine_oversubscription > 1.0;
    /* (with core_oversubscription 1 never a bottleneck, but a route may not be empty) */
    const bool has_pod_link = has_pods;

    fprintf(out, "  <zone id=\"links\" routing=\"Full\">\n");
    for (unsigned k = 0; k < n_nodes; k++)
        write_node_links(p, out, k, (p->nic.link.latency_s + p->fabric.latency_s) / 2.0);
    for (unsigned g = 0; g < n_groups; g++) {
        /* The leaf switches' downlinks, never a bottleneck (they equal the NICs below them):
         * SimGrid refuses an empty route from a node to its leaf. */
        fabric_link(out, "leaf", g, (double)npl * node_bw);
        fabric_link(out, "lup", g, leaf_up_bw);
    }
    for (unsigned q = 0; q < n_pods && has_spine_link; q++)
        fabric_link(out, "sp", q, spine_bw);
    for (unsigned q = 0; q < n_pods && has_pod_link; q++)
        fabric_link(out, "pup", q, pod_up_bw);
    fprintf(out, "  </zone>\n");

    for (unsigned q = 0; q < n_pods; q++) {
        if (has_pods)
            fprintf(out, "  <zone id=\"pod%u\" routing=\"DijkstraCache\">\n", q);
        const unsigned g0 = q * groups_per_pod;
        const unsigned g1 = g0 + groups_per_pod < n_groups ? g0 + groups_per_pod : n_groups;
        for (unsigned g = g0; g < g1; g++) {
            if (!is_flat)
                fprintf(out, "  <zone id=\"group%u\" routing=\"DijkstraCache\">\n", g);
            write_group_nodes(p, out, g, gpu_speed, cpu_speed);
            if (!is_flat) {
                switch_zone(out, "leafz", g, "leaf");
                const char *const leaf[] = {"leaf"};
                const unsigned leaf_i[] = {g};
                for (unsigned k = 0; k < n_nodes; k++)
                    if (topology_node_group(p, k) == g)
                        zone_routes(out, "node", "gw", k, "leafz", "leaf", g, leaf, leaf_i, 1);
                fprintf(out, "  </zone>\n");
            }
        }
        switch_zone(out, "spinez", q, "spine");
        const char *const up[] = {"lup", "sp"};
        for (unsigned g = g0; g < g1; g++) {
            const unsigned up_i[] = {g, q};
            const unsigned n_up = has_spine_link ? 2 : 1;
            if (!is_flat) {
                zone_routes(out, "group", "leaf", g, "spinez", "spine", q, up, up_i, n_up);
                continue;
            }
            for (unsigned k = 0; k < n_nodes; k++)
                if (topology_node_group(p, k) == g)
                    zone_routes(out, "node", "gw", k, "spinez", "spine", q, up, up_i, n_up);
        }
        if (has_pods)
            fprintf(out, "  </zone>\n");
    }
    if (has_pods) {
        switch_zone(out, "corez", 0, "core");
        const char *const up[] = {"pup"};
        for (unsigned q = 0; q < n_pods; q++) {
            const unsigned up_i[] = {q};
            zone_routes(out, "pod", "spine", q, "corez", "core", 0, up, up_i, 1);
        }
    }
}

void platform_xml_write(const Platform *p, Precision precision, FILE *out)
{
    double gpu_speed = platform_peak_flops_per_s(p, precision) * p->gpu.gemm_efficiency;
    double cpu_speed = (double)p->cpu.cores * p->cpu.adam_params_per_s_per_core;
    fprintf(out, "<?xml version='1.0'?>\n"
                 "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                 "<platform version=\"4.1\">\n"
                 "<zone id=\"root\" routing=\"DijkstraCache\">\n");
    if (p->fabric.nodes_per_leaf == 0)
        write_per_node_fabric(p, out, gpu_speed, cpu_speed);
    else
        write_built_fabric(p, out, gpu_speed, cpu_speed);
    fprintf(out, "</zone>\n</platform>\n");
}
