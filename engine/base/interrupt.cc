#include "engine/base/interrupt.h"

#include <atomic>
#include <cerrno>
#include <csignal>

namespace stitchfs::engine {
namespace {

std::atomic<bool> stop{false};

void OnSignal(int sig) {
  stop.store(true);
  std::signal(sig, SIG_DFL);
}

}  // namespace

void RequestStop() { stop.store(true); }
bool StopRequested() { return stop.load(std::memory_order_relaxed); }

Status CheckStop() {
  if (!StopRequested()) return Status::OK();
  return Status::IOError("interrupted", EINTR);
}

void StopOnSignals() {
  std::signal(SIGINT, OnSignal);
  std::signal(SIGTERM, OnSignal);
}

}  // namespace stitchfs::engine
