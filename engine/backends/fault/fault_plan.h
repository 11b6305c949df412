// FaultPlan: which calls of a FaultStorage (and of the writers, files and store moves it
// hands out) fail, stall or crash. Every call is counted by kind and in all; a Fault names the
// Nth call of one kind, or of any kind, and what happens to it.
#pragma once

#include <array>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "engine/base/status.h"

namespace stitchfs::engine {

enum class Call {
  // Storage.
  kOpenFolder,
  kOpenManifest,
  kStatManifest,
  kBeingRemoved,
  kOpenDataFile,
  kRead,  // ReadAt of a manifest or a data file.
  kReadIndex,
  kWriteIndex,
  kScanStore,
  kStartBackup,
  kMovesFor,
  // BackupWriter and WritableFile.
  kCreateStaged,
  kDropStaged,
  kPublish,
  kCreateDataFile,
  kAppend,
  kClose,
  kFinish,
  kReadBack,
  // StoreMoves.
  kLock,
  kWriters,
  kRemoveLeftovers,
  kBytesFreed,
  kNestedBackup,
  kStartReplace,
  kSetAside,
  kPutBack,
  kRemove,
  kSync,
  // ObjectStore (FaultObjects).
  kListKeys,
  kGetObject,
  kCreateIfAbsent,
  kDeleteObject,
};
inline constexpr size_t kCallKinds = static_cast<size_t>(Call::kDeleteObject) + 1;
const char* CallName(Call call);

enum class FaultAction {
  kFail,         // The call does nothing and returns the fault's status. A call that returns
                 // nothing (RemoveLeftovers, PutBack) does nothing; BytesFreed answers zeros and
                 // NestedBackup none, as the local moves do when they cannot look.
  kStall,        // The call waits until FaultPlan::Release, then goes on.
  kCrash,        // The process dies before the call does anything: the call and every later
                 // one fail (kIOError, ECANCELED) and the plan's crash action runs.
  kCrashAfter,   // The call is done, then the process dies before hearing of it.
  kCorrupt,      // The call goes on, its bytes silently wrong (a disk's, a network's or a
                 // copy's fault): an Append writes, a Read returns, its bytes with the first one
                 // flipped. Other calls go on unchanged, the fault spent (a sweep of all calls
                 // meets them); one named by another kind aborts the test (Add).
  kCorruptKept,  // A Read of a data file as kCorrupt, and its wrong byte kept on the way (as
                 // an object store's block cache would): every later read of that byte of the
                 // file gets it wrong again, until the file's DropCached. Other calls as
                 // kCorrupt.
};

struct Fault {
  std::optional<Call> kind;  // The calls counted: one kind, or (nullopt) all of them.
  uint64_t nth = 1;          // 1 for the first.
  FaultAction action = FaultAction::kFail;
  Status status = Status::IOError("injected fault", EIO);
};

// Thread-safe.
class FaultPlan {
 public:
  // `on_crash` runs once, when a crash fault fires (MemStorage::Kill or LosePower, say);
  // without one a crash only fails every later call, and what the storage handed out is
  // destroyed as after any error.
  explicit FaultPlan(std::function<void()> on_crash = {}) : on_crash_(std::move(on_crash)) {}

  void Add(Fault f);
  // The calls made so far: of one kind, of all kinds, and their kinds in order.
  uint64_t count(Call kind) const;
  uint64_t total() const;
  std::vector<Call> trace() const;
  // How many faults fired; true once a crash did.
  int fired() const;
  bool crashed() const;

  // Waits up to `timeout` until a call is stalled; true if one is.
  bool WaitStalled(std::chrono::milliseconds timeout);
  // Lets every stalled call go on.
  void Release();

  // For the decorators: counts a call of `kind` and applies the faults it meets. OK to go on
  // (`*crash_after` set if the process dies once the call is done; `*corrupt`, where given,
  // if the call's bytes are to be made wrong; `*kept`, where given, if the wrong bytes are also
  // to be kept: kCorruptKept), else the call's result.
  Status Enter(Call kind, bool* crash_after, bool* corrupt = nullptr, bool* kept = nullptr);
  // A kCrashAfter fault's crash, once its call was done; returns what the call returns then.
  Status CrashNow();

 private:
  static Status Crashed();
  void Crash(std::unique_lock<std::mutex>& lock);  // REQUIRES: `lock` holds mu_; releases it.

  const std::function<void()> on_crash_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  struct Pending {
    Fault fault;
    bool done = false;
  };
  std::vector<Pending> faults_;
  std::array<uint64_t, kCallKinds> counts_{};
  std::vector<Call> trace_;
  int fired_ = 0;
  bool crashed_ = false;
  int stalled_ = 0;             // Calls waiting now,
  uint64_t release_epoch_ = 0;  // for a Release after this one.
};

// Runs `call` as a call of `kind` under `plan`: its faults first, then the call, then a crash
// after it if one is due. `call` returns a Status or a StatusOr.
template <typename F>
auto Guarded(FaultPlan& plan, Call kind, F&& call) -> decltype(call()) {
  bool crash_after = false;
  RETURN_IF_ERROR(plan.Enter(kind, &crash_after));
  auto result = call();
  if (crash_after) return plan.CrashNow();
  return result;
}

// Guarded for a call that moves bytes: `call(corrupt)` is told whether to make them wrong.
template <typename F>
auto GuardedBytes(FaultPlan& plan, Call kind, F&& call) -> decltype(call(false)) {
  bool crash_after = false;
  bool corrupt = false;
  RETURN_IF_ERROR(plan.Enter(kind, &crash_after, &corrupt));
  auto result = call(corrupt);
  if (crash_after) return plan.CrashNow();
  return result;
}

}  // namespace stitchfs::engine
