// FaultStorage: a Storage that passes every call on to another one, and every writer, file
// and store move it hands out wrapped the same way, counting the calls by kind and failing,
// stalling or crashing the ones its FaultPlan names (fault_plan.h). Over a MemStorage, whose
// Kill or LosePower the plan's crash action calls, a crash is a process's death: nothing it
// held is cleaned up, its locks are a dead writer's, and (with LosePower) what it had not made
// durable is gone; a fresh FaultStorage over MemStorage::NewProcess is the next run.
//
// Folders pass through unwrapped (they are the inner storage's, and no call is made on them);
// so do, uncounted, the calls that reach nothing (Normal, LocatorFor, SharesCredentials,
// StoreRescanNs). Files written through it offer no fd, so that every byte goes through Append.
#pragma once

#include <memory>

#include "engine/backends/fault/fault_plan.h"
#include "engine/storage/storage.h"

namespace stitchfs::engine {

// Thread-safe.
class FaultStorage final : public Storage {
 public:
  FaultStorage(std::shared_ptr<const Storage> inner, std::shared_ptr<FaultPlan> plan)
      : inner_(std::move(inner)), plan_(std::move(plan)) {}

  FaultPlan& plan() const { return *plan_; }

  std::string Normal(const std::string& location) const override {
    return inner_->Normal(location);
  }
  StatusOr<std::shared_ptr<const BackupFolder>> OpenFolder(
      const std::string& location) const override;
  StatusOr<ManifestSource> OpenManifest(const BackupFolder& folder) const override;
  StatusOr<std::optional<ManifestIdentity>> StatManifest(
      const std::string& location) const override;
  StatusOr<bool> BeingRemoved(const std::string& location) const override;
  StatusOr<std::shared_ptr<const BackupDataFile>> OpenDataFile(
      const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
      uint64_t declared_size) const override;
  StatusOr<SharedBytes> ReadIndex(const BackupFolder& folder) const override;
  Status WriteIndex(const BackupFolder& folder, std::string_view bytes) const override;
  StatusOr<std::vector<StoreFolder>> ScanStore(const std::string& location) const override;
  int64_t StoreRescanNs(const std::string& location) const override {
    return inner_->StoreRescanNs(location);
  }
  std::string LocatorFor(const std::string& location) const override {
    return inner_->LocatorFor(location);
  }
  bool SharesCredentials(const std::string& location, const std::string& base) const override {
    return inner_->SharesCredentials(location, base);
  }
  StatusOr<std::unique_ptr<BackupWriter>> StartBackup(const std::string& location,
                                                      const WriterIntent& intent,
                                                      std::string* notice) const override;
  StatusOr<std::unique_ptr<StoreMoves>> MovesFor(const std::string& location) const override;

 private:
  const std::shared_ptr<const Storage> inner_;
  const std::shared_ptr<FaultPlan> plan_;
};

// What FaultStorage hands out, wrapped (fault_writer.cc, fault_moves.cc).
std::unique_ptr<BackupWriter> FaultyWriter(std::shared_ptr<FaultPlan> plan,
                                           std::unique_ptr<BackupWriter> inner);
std::unique_ptr<StoreMoves> FaultyMoves(std::shared_ptr<FaultPlan> plan,
                                        std::unique_ptr<StoreMoves> inner);
std::shared_ptr<const RandomAccessFile> FaultyReader(std::shared_ptr<FaultPlan> plan,
                                                     std::shared_ptr<const RandomAccessFile> inner);

}  // namespace stitchfs::engine
