/*
 * activity.cpp - a rank's pending SimGrid activities and one wait over all of them (see
 * activity.h). The only C++ of the engine: s4u's ActivityPtr vector and
 * Activity::wait_any_for, which SimGrid 3.32 offers only in C++.
 */
#include "activity.h"

#include <simgrid/s4u/Activity.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Io.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace sg4 = simgrid::s4u;

/* Only one activity per tag is waited for at a time (the caller needs all of a tag's to end,
 * not which ends first, and a wait costs SimGrid work per activity waited on); the others
 * queue in `later`. */
struct ActivitySet {
    std::vector<sg4::ActivityPtr> pending;
    std::vector<uint32_t> tags; /* tags[i] is pending[i]'s */
    std::vector<sg4::ActivityPtr> later;
    std::vector<uint32_t> later_tags;
};

/* Payloads carry no data, only a simulated size; receives land in one static sink because
 * SimGrid writes it when the comm completes. */
static char token;
static void *received;

static void add(ActivitySet *set, sg4::ActivityPtr a, uint32_t tag)
{
    for (uint32_t t : set->tags)
        if (t == tag) {
            set->later.push_back(std::move(a));
            set->later_tags.push_back(tag);
            return;
        }
    set->pending.push_back(std::move(a));
    set->tags.push_back(tag);
}

/* Removes pending[i] (i < 0: none) and returns its tag. */
static uint32_t take(ActivitySet *set, ssize_t i)
{
    if (i < 0)
        return ACTIVITY_NONE;
    uint32_t tag = set->tags[(size_t)i];
    /* swap-remove: the order of the set is no one's business */
    set->pending[(size_t)i] = std::move(set->pending.back());
    set->pending.pop_back();
    set->tags[(size_t)i] = set->tags.back();
    set->tags.pop_back();
    for (size_t k = 0; k < set->later.size(); k++)
        if (set->later_tags[k] == tag) {
            set->pending.push_back(std::move(set->later[k]));
            set->tags.push_back(tag);
            set->later[k] = std::move(set->later.back());
            set->later.pop_back();
            set->later_tags[k] = set->later_tags.back();
            set->later_tags.pop_back();
            break;
        }
    return tag;
}

ActivitySet *activity_set_create(void)
{
    ActivitySet *set = new ActivitySet;
    set->pending.reserve(16);
    set->tags.reserve(16);
    return set;
}

void activity_set_destroy(ActivitySet *set)
{
    delete set;
}

size_t activity_set_count(const ActivitySet *set)
{
    return set->pending.size() + set->later.size();
}

void activity_exec(ActivitySet *set, sg_host_t host, double flops, uint32_t tag)
{
    sg4::ExecPtr e = sg4::this_actor::exec_init(flops);
    if (host != sg4::this_actor::get_host())
        e->set_host(host);
    e->start();
    add(set, e, tag);
}

void activity_put(ActivitySet *set, sg_mailbox_t to, double bytes, uint32_t tag)
{
    /* the same conversion as sg_mailbox_put_async's long */
    add(set, to->put_async(&token, static_cast<uint64_t>(static_cast<long>(bytes))), tag);
}

void activity_get(ActivitySet *set, sg_mailbox_t from, uint32_t tag)
{
    add(set, from->get_async<void>(&received), tag);
}

void activity_sendto(ActivitySet *set, sg_host_t from, sg_host_t to, double bytes, uint32_t tag)
{
    /* the same conversion as sg_host_sendto's */
    add(set, sg4::Comm::sendto_async(from, to, static_cast<uint64_t>(bytes)), tag);
}

void activity_disk(ActivitySet *set, sg_disk_t disk, int is_read, double bytes, uint32_t tag)
{
    sg_size_t size = static_cast<sg_size_t>(bytes); /* sg_disk_read's conversion */
    add(set, is_read ? disk->read_async(size) : disk->write_async(size), tag);
}

/* The timeout that SimGrid, adding it to the clock, turns into deadline_s exactly: a timer
 * started when the wait began ends at start + wait, and a later wait for what is left must
 * end there too, to the last bit (deadline - now + now is not always the deadline). */
static double timeout_to(double deadline_s)
{
    const double now_s = sg4::Engine::get_clock();
    double t = deadline_s - now_s;
    if (t <= 0)
        return 0.0;
    for (int i = 0; i < 4 && now_s + t != deadline_s; i++)
        t = now_s + t < deadline_s ? std::nextafter(t, HUGE_VAL) : std::nextafter(t, 0.0);
    return t;
}

uint32_t activity_wait_any(ActivitySet *set, double deadline_s)
{
    if (set->pending.empty()) {
        if (deadline_s >= 0)
            sg4::this_actor::sleep_for(timeout_to(deadline_s));
        return ACTIVITY_NONE;
    }
    double timeout_s = deadline_s >= 0 ? timeout_to(deadline_s) : -1.0;
    return take(set, sg4::Activity::wait_any_for(set->pending, timeout_s));
}
