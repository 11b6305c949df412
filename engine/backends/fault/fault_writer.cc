// FaultStorage's writers and the files they write: each method a call.
#include "engine/backends/fault/fault_storage.h"

namespace stitchfs::engine {
namespace {

class FaultWritable final : public WritableFile {
 public:
  FaultWritable(std::shared_ptr<FaultPlan> plan, std::unique_ptr<WritableFile> inner)
      : plan_(std::move(plan)), inner_(std::move(inner)) {}
  Status Append(std::string_view data) override {
    return GuardedBytes(*plan_, Call::kAppend, [&](bool corrupt) {
      if (!corrupt || data.empty()) return inner_->Append(data);
      std::string wrong(data);
      wrong[0] = static_cast<char>(wrong[0] ^ 0x01);
      return inner_->Append(wrong);
    });
  }
  Status Close() override {
    return Guarded(*plan_, Call::kClose, [&] { return inner_->Close(); });
  }
  // No fd(), no AppendCopy: every byte comes through Append.

 private:
  const std::shared_ptr<FaultPlan> plan_;
  const std::unique_ptr<WritableFile> inner_;
};

class FaultWriter final : public BackupWriter {
 public:
  FaultWriter(std::shared_ptr<FaultPlan> plan, std::unique_ptr<BackupWriter> inner)
      : plan_(std::move(plan)), inner_(std::move(inner)) {}

  StatusOr<std::unique_ptr<WritableFile>> CreateStaged(const std::string& id,
                                                       const std::string& name) override {
    return Wrap(Call::kCreateStaged, [&] { return inner_->CreateStaged(id, name); });
  }
  Status DropStaged(const std::string& id) override {
    return Guarded(*plan_, Call::kDropStaged, [&] { return inner_->DropStaged(id); });
  }
  Status Publish(const std::string& id, const std::string& name) override {
    return Guarded(*plan_, Call::kPublish, [&] { return inner_->Publish(id, name); });
  }
  StatusOr<std::unique_ptr<WritableFile>> CreateDataFile(const std::string& name) override {
    return Wrap(Call::kCreateDataFile, [&] { return inner_->CreateDataFile(name); });
  }
  Status Finish(std::string_view manifest) override {
    return Guarded(*plan_, Call::kFinish, [&] { return inner_->Finish(manifest); });
  }
  StatusOr<std::shared_ptr<const RandomAccessFile>> ReadBack(const std::string& name,
                                                             uint64_t size) override {
    return Guarded(*plan_, Call::kReadBack,
                   [&]() -> StatusOr<std::shared_ptr<const RandomAccessFile>> {
                     ASSIGN_OR_RETURN(auto file, inner_->ReadBack(name, size));
                     return FaultyReader(plan_, std::move(file));
                   });
  }

 private:
  // `create` as a call of `kind`, its file wrapped.
  template <typename F>
  StatusOr<std::unique_ptr<WritableFile>> Wrap(Call kind, F&& create) {
    return Guarded(*plan_, kind, [&]() -> StatusOr<std::unique_ptr<WritableFile>> {
      ASSIGN_OR_RETURN(auto file, create());
      return std::unique_ptr<WritableFile>(new FaultWritable(plan_, std::move(file)));
    });
  }

  const std::shared_ptr<FaultPlan> plan_;
  const std::unique_ptr<BackupWriter> inner_;
};

}  // namespace

std::unique_ptr<BackupWriter> FaultyWriter(std::shared_ptr<FaultPlan> plan,
                                           std::unique_ptr<BackupWriter> inner) {
  return std::make_unique<FaultWriter>(std::move(plan), std::move(inner));
}

}  // namespace stitchfs::engine
