#include "fs/link_pins.h"

namespace stitchfs::fs {

void LinkPins::Pin(uint64_t caller, std::string_view name, uint64_t slot, int64_t now_ns) {
  if (caller == 0) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (pins_.size() >= kMaxPins) DropExpired(now_ns);
  if (pins_.size() >= kMaxPins) pins_.erase(pins_.begin());  // Some thread's: it walks on unpinned.
  pins_[{caller, std::string(name)}] = Entry{slot, now_ns};
}

uint64_t LinkPins::Pinned(uint64_t caller, std::string_view name, int64_t now_ns) const {
  if (caller == 0) return 0;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = pins_.find(std::pair<uint64_t, std::string>(caller, name));
  if (it == pins_.end() || now_ns - it->second.pinned_ns >= kLifeNs) return 0;
  return it->second.slot;
}

size_t LinkPins::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pins_.size();
}

void LinkPins::DropExpired(int64_t now_ns) {
  for (auto it = pins_.begin(); it != pins_.end();) {
    it = now_ns - it->second.pinned_ns >= kLifeNs ? pins_.erase(it) : std::next(it);
  }
}

}  // namespace stitchfs::fs
