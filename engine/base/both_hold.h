// BothHold: two independent checks run at once, one on a thread of its own and one on the
// caller's, for work large enough to pay for starting a thread (opening a big manifest uses
// the second core instead of leaving it idle). FUSE-free.
#pragma once

#include <functional>

namespace stitchfs::engine {

// True if both `here` and `other` return true. `other` runs on a new thread while `here` runs on
// the caller's; where no thread can be started, they run one after the other. Both always run
// to the end (neither is cancelled by the other's result). Thread-safe if the two are safe to
// run at once.
bool BothHold(const std::function<bool()>& here, const std::function<bool()>& other);

}  // namespace stitchfs::engine
