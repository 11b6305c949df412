// FaultStorage's store moves: each method a call, a replacement's writing as a writer's.
#include "engine/backends/fault/fault_storage.h"
#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

class FaultMoves final : public StoreMoves {
 public:
  FaultMoves(std::shared_ptr<FaultPlan> plan, std::unique_ptr<StoreMoves> inner)
      : plan_(std::move(plan)), inner_(std::move(inner)) {}

  Status Lock() override {
    return Guarded(*plan_, Call::kLock, [&] { return inner_->Lock(); });
  }
  StatusOr<std::vector<StoreWriter>> Writers(const std::set<std::string>& backups) override {
    return Guarded(*plan_, Call::kWriters, [&] { return inner_->Writers(backups); });
  }
  std::vector<std::string> RemoveLeftovers() override {
    auto left =
        Guarded(*plan_, Call::kRemoveLeftovers,
                [&]() -> StatusOr<std::vector<std::string>> { return inner_->RemoveLeftovers(); });
    return left.ok() ? *left : std::vector<std::string>();  // Failed: nothing removed.
  }
  std::vector<uint64_t> BytesFreed(const std::vector<std::string>& paths) override {
    auto freed = Guarded(*plan_, Call::kBytesFreed, [&]() -> StatusOr<std::vector<uint64_t>> {
      return inner_->BytesFreed(paths);
    });
    return freed.ok() ? *freed : std::vector<uint64_t>(paths.size(), 0);
  }
  std::optional<std::string> NestedBackup(const std::string& path, const Manifest& m) override {
    auto nested = Guarded(
        *plan_, Call::kNestedBackup,
        [&]() -> StatusOr<std::optional<std::string>> { return inner_->NestedBackup(path, m); });
    return nested.ok() ? *nested : std::nullopt;
  }
  StatusOr<std::unique_ptr<StoreReplacement>> StartReplace(const std::string& path,
                                                           const std::string& uuid) override {
    return Guarded(
        *plan_, Call::kStartReplace, [&]() -> StatusOr<std::unique_ptr<StoreReplacement>> {
          ASSIGN_OR_RETURN(auto copy, inner_->StartReplace(path, uuid));
          StoreReplacement* raw = copy.get();
          std::string prefix = raw->data_prefix();
          return std::unique_ptr<StoreReplacement>(
              new CopyReplacement(FaultyWriter(plan_, std::move(copy)), std::move(prefix),
                                  [raw](BackupWriter& w, std::string_view m) -> StatusOr<uint64_t> {
                                    RETURN_IF_ERROR(w.Finish(m));
                                    return raw->bytes_written();
                                  }));
        });
  }
  Status SetAside(const std::string& path) override {
    return Guarded(*plan_, Call::kSetAside, [&] { return inner_->SetAside(path); });
  }
  void PutBack(const std::string& path) override {
    Guarded(*plan_, Call::kPutBack, [&] {
      inner_->PutBack(path);
      return Status::OK();
    }).IgnoreError();  // Failed: left marked, for the next prune to unmark.
  }
  Status Remove(const std::string& path) override {
    return Guarded(*plan_, Call::kRemove, [&] { return inner_->Remove(path); });
  }
  Status Sync() override {
    return Guarded(*plan_, Call::kSync, [&] { return inner_->Sync(); });
  }

 private:
  const std::shared_ptr<FaultPlan> plan_;
  const std::unique_ptr<StoreMoves> inner_;
};

}  // namespace

std::unique_ptr<StoreMoves> FaultyMoves(std::shared_ptr<FaultPlan> plan,
                                        std::unique_ptr<StoreMoves> inner) {
  return std::make_unique<FaultMoves>(std::move(plan), std::move(inner));
}

}  // namespace stitchfs::engine
