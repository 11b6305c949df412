#include "engine/backends/fault/fault_plan.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace stitchfs::engine {

const char* CallName(Call call) {
  switch (call) {
    case Call::kOpenFolder:
      return "OpenFolder";
    case Call::kOpenManifest:
      return "OpenManifest";
    case Call::kStatManifest:
      return "StatManifest";
    case Call::kBeingRemoved:
      return "BeingRemoved";
    case Call::kOpenDataFile:
      return "OpenDataFile";
    case Call::kRead:
      return "Read";
    case Call::kReadIndex:
      return "ReadIndex";
    case Call::kWriteIndex:
      return "WriteIndex";
    case Call::kScanStore:
      return "ScanStore";
    case Call::kStartBackup:
      return "StartBackup";
    case Call::kMovesFor:
      return "MovesFor";
    case Call::kCreateStaged:
      return "CreateStaged";
    case Call::kDropStaged:
      return "DropStaged";
    case Call::kPublish:
      return "Publish";
    case Call::kCreateDataFile:
      return "CreateDataFile";
    case Call::kAppend:
      return "Append";
    case Call::kClose:
      return "Close";
    case Call::kFinish:
      return "Finish";
    case Call::kReadBack:
      return "ReadBack";
    case Call::kLock:
      return "Lock";
    case Call::kWriters:
      return "Writers";
    case Call::kRemoveLeftovers:
      return "RemoveLeftovers";
    case Call::kBytesFreed:
      return "BytesFreed";
    case Call::kNestedBackup:
      return "NestedBackup";
    case Call::kStartReplace:
      return "StartReplace";
    case Call::kSetAside:
      return "SetAside";
    case Call::kPutBack:
      return "PutBack";
    case Call::kRemove:
      return "Remove";
    case Call::kSync:
      return "Sync";
    case Call::kListKeys:
      return "ListKeys";
    case Call::kGetObject:
      return "GetObject";
    case Call::kCreateIfAbsent:
      return "CreateIfAbsent";
    case Call::kDeleteObject:
      return "DeleteObject";
  }
  return "?";
}

void FaultPlan::Add(Fault f) {
  const bool corrupt = f.action == FaultAction::kCorrupt || f.action == FaultAction::kCorruptKept;
  if (corrupt && f.kind && *f.kind != Call::kAppend && *f.kind != Call::kRead) {
    std::fprintf(stderr, "FaultPlan: a call of kind %s has no bytes to corrupt\n",
                 CallName(*f.kind));
    std::abort();  // A test that could not fail otherwise.
  }
  std::lock_guard<std::mutex> lock(mu_);
  faults_.push_back({std::move(f), false});
}

uint64_t FaultPlan::count(Call kind) const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_[static_cast<size_t>(kind)];
}

uint64_t FaultPlan::total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trace_.size();
}

std::vector<Call> FaultPlan::trace() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trace_;
}

int FaultPlan::fired() const {
  std::lock_guard<std::mutex> lock(mu_);
  return fired_;
}

bool FaultPlan::crashed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return crashed_;
}

bool FaultPlan::WaitStalled(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return stalled_ > 0; });
}

void FaultPlan::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  ++release_epoch_;
  cv_.notify_all();
}

Status FaultPlan::Crashed() {
  return Status::IOError("the process died (a simulated crash)", ECANCELED);
}

void FaultPlan::Crash(std::unique_lock<std::mutex>& lock) {
  const bool first = !crashed_;
  crashed_ = true;
  cv_.notify_all();
  lock.unlock();
  if (first && on_crash_) on_crash_();
}

Status FaultPlan::Enter(Call kind, bool* crash_after, bool* corrupt, bool* kept) {
  std::unique_lock<std::mutex> lock(mu_);
  if (crashed_) return Crashed();
  const uint64_t of_kind = ++counts_[static_cast<size_t>(kind)];
  trace_.push_back(kind);
  const uint64_t of_all = trace_.size();
  for (Pending& p : faults_) {
    const uint64_t n = !p.fault.kind ? of_all : *p.fault.kind == kind ? of_kind : 0;
    if (p.done || n != p.fault.nth) continue;
    p.done = true;
    ++fired_;
    switch (p.fault.action) {
      case FaultAction::kFail:
        return p.fault.status;
      case FaultAction::kStall: {
        const uint64_t epoch = release_epoch_;
        ++stalled_;
        cv_.notify_all();
        cv_.wait(lock, [&] { return release_epoch_ != epoch || crashed_; });
        --stalled_;
        if (crashed_) return Crashed();
        break;
      }
      case FaultAction::kCrash:
        Crash(lock);
        return Crashed();
      case FaultAction::kCrashAfter:
        *crash_after = true;
        break;
      case FaultAction::kCorrupt:
        if (corrupt != nullptr) *corrupt = true;
        break;
      case FaultAction::kCorruptKept:
        if (corrupt != nullptr) *corrupt = true;
        if (kept != nullptr) *kept = true;
        break;
    }
  }
  return Status::OK();
}

Status FaultPlan::CrashNow() {
  std::unique_lock<std::mutex> lock(mu_);
  Crash(lock);
  return Crashed();
}

}  // namespace stitchfs::engine
