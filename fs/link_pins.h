// LinkPins: which generation of a backup folder a store link meant when a thread read it. A
// path walk reads a link (`latest -> real2`) and then looks its target's name up, two requests
// apart; a backup that takes the folder's place in between must not be where the walk lands.
// So a link read pins (calling thread, folder name) to the generation it meant, and that
// thread's lookups of the name within kLifeNs resolve to that generation or to nothing (see
// StoreView). FUSE-free: the caller is FUSE's pid of a request, the thread's id.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

namespace stitchfs::fs {

// Thread-safe.
class LinkPins {
 public:
  // A walk follows its link at once; a second is ample even on a loaded machine.
  static constexpr int64_t kLifeNs = 1'000'000'000;
  // Beyond this many live pins (as many threads walking links at once), older ones are dropped.
  static constexpr size_t kMaxPins = 4096;

  // Thread `caller` read a link to folder `name` meaning generation `slot`, at `now_ns`.
  // Caller 0 (unknown) pins nothing.
  void Pin(uint64_t caller, std::string_view name, uint64_t slot, int64_t now_ns);
  // The generation thread `caller` last pinned `name` to, if that was less than kLifeNs before
  // `now_ns`; else 0.
  uint64_t Pinned(uint64_t caller, std::string_view name, int64_t now_ns) const;
  size_t size() const;

 private:
  struct Entry {
    uint64_t slot = 0;
    int64_t pinned_ns = 0;
  };
  void DropExpired(int64_t now_ns);  // REQUIRES: mu_ held.

  mutable std::mutex mu_;
  std::map<std::pair<uint64_t, std::string>, Entry, std::less<>> pins_;  // Guarded by mu_.
};

}  // namespace stitchfs::fs
