#include "engine/backends/fault/fault_storage.h"

#include <mutex>
#include <set>

#include "engine/storage/store_moves.h"

namespace stitchfs::engine {
namespace {

// `inner`'s bytes read under `plan` as a call of `kind` each (kCorrupt flips the first byte).
Status ReadUnder(FaultPlan& plan, const RandomAccessFile& inner, uint64_t offset,
                 std::span<char> dst) {
  return GuardedBytes(plan, Call::kRead, [&](bool corrupt) {
    Status s = inner.ReadAt(offset, dst).status();
    if (s.ok() && corrupt && !dst.empty()) dst[0] = static_cast<char>(dst[0] ^ 0x01);
    return s;
  });
}

// A manifest's bytes, or a written file's read back, each read a call.
class FaultReader final : public RandomAccessFile {
 public:
  FaultReader(std::shared_ptr<FaultPlan> plan, std::shared_ptr<const RandomAccessFile> inner)
      : plan_(std::move(plan)), inner_(std::move(inner)) {}
  uint64_t size() const override { return inner_->size(); }

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    return ReadUnder(*plan_, *inner_, offset, dst);
  }

 private:
  const std::shared_ptr<FaultPlan> plan_;
  const std::shared_ptr<const RandomAccessFile> inner_;
};

// A data file, each read a call; the bytes kCorruptKept made wrong stay wrong until DropCached.
class FaultDataFile final : public BackupDataFile {
 public:
  FaultDataFile(std::shared_ptr<FaultPlan> plan, std::shared_ptr<const BackupDataFile> inner)
      : plan_(std::move(plan)), inner_(std::move(inner)) {}
  uint64_t size() const override { return inner_->size(); }
  void Prefetch(uint64_t offset, uint64_t length) const override {
    inner_->Prefetch(offset, length);
  }
  const std::string& display_name() const override { return inner_->display_name(); }
  bool DropCached() const override {
    std::lock_guard<std::mutex> lock(mu_);
    const bool had = !kept_.empty();
    kept_.clear();
    return inner_->DropCached() || had;
  }
  // (No KernelFd or Stored object: every byte of a copy passes through the plan.)

 protected:
  Status ReadExact(uint64_t offset, std::span<char> dst) const override {
    bool crash_after = false, corrupt = false, keep = false;
    RETURN_IF_ERROR(plan_->Enter(Call::kRead, &crash_after, &corrupt, &keep));
    Status s = inner_->ReadAt(offset, dst).status();
    if (s.ok()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (keep) kept_.insert(offset);
      if (corrupt && !keep) dst[0] = static_cast<char>(dst[0] ^ 0x01);
      for (auto it = kept_.lower_bound(offset); it != kept_.end() && *it < offset + dst.size();
           ++it) {
        dst[*it - offset] = static_cast<char>(dst[*it - offset] ^ 0x01);
      }
    }
    if (crash_after) return plan_->CrashNow();
    return s;
  }

 private:
  const std::shared_ptr<FaultPlan> plan_;
  const std::shared_ptr<const BackupDataFile> inner_;
  mutable std::mutex mu_;
  mutable std::set<uint64_t> kept_;  // Offsets of the bytes kept wrong.
};

}  // namespace

std::shared_ptr<const RandomAccessFile> FaultyReader(
    std::shared_ptr<FaultPlan> plan, std::shared_ptr<const RandomAccessFile> inner) {
  return std::make_shared<const FaultReader>(std::move(plan), std::move(inner));
}

StatusOr<std::shared_ptr<const BackupFolder>> FaultStorage::OpenFolder(
    const std::string& location) const {
  return Guarded(*plan_, Call::kOpenFolder, [&] { return inner_->OpenFolder(location); });
}

StatusOr<ManifestSource> FaultStorage::OpenManifest(const BackupFolder& folder) const {
  return Guarded(*plan_, Call::kOpenManifest, [&]() -> StatusOr<ManifestSource> {
    ASSIGN_OR_RETURN(ManifestSource m, inner_->OpenManifest(folder));
    m.bytes = std::make_unique<FaultReader>(plan_, std::move(m.bytes));
    return m;
  });
}

StatusOr<std::optional<ManifestIdentity>> FaultStorage::StatManifest(
    const std::string& location) const {
  return Guarded(*plan_, Call::kStatManifest, [&] { return inner_->StatManifest(location); });
}

StatusOr<bool> FaultStorage::BeingRemoved(const std::string& location) const {
  return Guarded(*plan_, Call::kBeingRemoved, [&] { return inner_->BeingRemoved(location); });
}

StatusOr<std::shared_ptr<const BackupDataFile>> FaultStorage::OpenDataFile(
    const std::shared_ptr<const BackupFolder>& folder, const std::string& relative,
    uint64_t declared_size) const {
  return Guarded(
      *plan_, Call::kOpenDataFile, [&]() -> StatusOr<std::shared_ptr<const BackupDataFile>> {
        ASSIGN_OR_RETURN(auto file, inner_->OpenDataFile(folder, relative, declared_size));
        return std::shared_ptr<const BackupDataFile>(
            std::make_shared<const FaultDataFile>(plan_, std::move(file)));
      });
}

StatusOr<SharedBytes> FaultStorage::ReadIndex(const BackupFolder& folder) const {
  return Guarded(*plan_, Call::kReadIndex, [&] { return inner_->ReadIndex(folder); });
}

Status FaultStorage::WriteIndex(const BackupFolder& folder, std::string_view bytes) const {
  return Guarded(*plan_, Call::kWriteIndex, [&] { return inner_->WriteIndex(folder, bytes); });
}

StatusOr<std::vector<StoreFolder>> FaultStorage::ScanStore(const std::string& location) const {
  return Guarded(*plan_, Call::kScanStore, [&] { return inner_->ScanStore(location); });
}

StatusOr<std::unique_ptr<BackupWriter>> FaultStorage::StartBackup(const std::string& location,
                                                                  const WriterIntent& intent,
                                                                  std::string* notice) const {
  return Guarded(*plan_, Call::kStartBackup, [&]() -> StatusOr<std::unique_ptr<BackupWriter>> {
    ASSIGN_OR_RETURN(auto writer, inner_->StartBackup(location, intent, notice));
    return FaultyWriter(plan_, std::move(writer));
  });
}

StatusOr<std::unique_ptr<StoreMoves>> FaultStorage::MovesFor(const std::string& location) const {
  return Guarded(*plan_, Call::kMovesFor, [&]() -> StatusOr<std::unique_ptr<StoreMoves>> {
    ASSIGN_OR_RETURN(auto moves, inner_->MovesFor(location));
    return FaultyMoves(plan_, std::move(moves));
  });
}

}  // namespace stitchfs::engine
