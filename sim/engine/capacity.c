/*
 * capacity.c - the memory-map budget of a simulation (see capacity.h).
 */
#include "capacity.h"

#include <stdio.h>

long capacity_count_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL)
        return -1;
    long n = 0;
    for (int c; (c = fgetc(f)) != EOF;)
        n += c == '\n';
    fclose(f);
    return n;
}

static long max_map_count(void)
{
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f == NULL)
        return -1;
    long v = -1;
    if (fscanf(f, "%ld", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

int capacity_check_maps(uint32_t n_actors, unsigned maps_per_actor, Err *err)
{
    const long limit = max_map_count(), now = capacity_count_maps();
    if (limit <= 0 || now < 0)
        return 0;
    const double need = (double)now + 1.1 * maps_per_actor * (double)n_actors;
    if (need <= (double)limit)
        return 0;
    return err_set(err,
                   "engine: the simulation needs about %.0f memory mappings (%u actors, one per "
                   "stream, %u each) and vm.max_map_count allows %ld: simulate fewer ranks "
                   "(--mode symmetric, the default beyond 4 nodes) or raise vm.max_map_count "
                   "(sysctl -w vm.max_map_count=%.0f)",
                   need, n_actors, maps_per_actor, limit, need * 1.2);
}

int capacity_check_actors(uint32_t n_actors, Err *err)
{
    return capacity_check_maps(n_actors, CAPACITY_MAPS_PER_ACTOR, err);
}
