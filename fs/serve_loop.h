// ServeSpinning: a FUSE session loop built for machines where waking a sleeping thread on
// another CPU is expensive (virtual machines: an inter-processor interrupt and a VM exit per
// wakeup, which costs more than serving a metadata request).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <functional>

namespace stitchfs::fs {

// Serves `se` until it exits. One thread (the spinner) receives and serves every request and,
// after each one, polls the device for `spin_us` microseconds before sleeping in poll(): while
// it polls, a new request needs no wakeup at all. A watchdog looks every millisecond while
// requests flow; when a request has waited for a whole millisecond (the spinner is busy, for
// example on a slow disk), it wakes one of `helpers` threads, which serve requests until none
// waits, then run `idle` (if any) and sleep. Returns 0, or -1 if reading the device failed.
int ServeSpinning(fuse_session* se, int helpers, long spin_us,
                  const std::function<void()>& idle = {});

}  // namespace stitchfs::fs
