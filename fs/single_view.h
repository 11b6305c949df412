// SingleView: the namespace of a mount of one backup. It serves the backup's BackupView and,
// when a file of the tree cannot be opened because the chain changed on disk under the mount
// (stitch prune removed a base after flattening the level above it in place, or flattened this
// backup itself), opens the backup again through its chain as it is now and reads the same
// bytes from there. Everything else (the tree, attributes, origins, the .appended files and the
// flat manifest, which are the top's own) stays what the first view showed: a view opened
// again reads file bytes only, so nothing shown under an inode number changes. A backup that
// shows other content now (another backup in its place) is never read for the first: its reads
// keep failing. FUSE-free.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "engine/read/chain_options.h"
#include "fs/backup_view.h"

namespace stitchfs::fs {

// Thread-safe.
class SingleView final : public Namespace {
 public:
  using Log = std::function<void(const std::string&)>;
  // Opens of the backup again, one after another while the chain keeps changing (a prune
  // flattens one level after another), for one failed open of a file.
  static constexpr int kRenewAttempts = 8;

  // `view` opened through `chain` (whose storage and caches are used again); `log` gets a line
  // for each time the backup is opened again.
  SingleView(std::shared_ptr<const BackupView> view, engine::ChainOptions chain, AttrOptions attr,
             Log log);

  engine::StatusOr<struct stat> Attr(uint64_t ino) const override { return first_->Attr(ino); }
  engine::StatusOr<uint64_t> Lookup(uint64_t parent, std::string_view name) const override {
    return first_->Lookup(parent, name);
  }
  double Timeout(uint64_t ino) const override { return first_->Timeout(ino); }
  engine::StatusOr<std::vector<DirEntry>> ReadDir(uint64_t ino, size_t offset,
                                                  size_t max) const override {
    return first_->ReadDir(ino, offset, max);
  }
  engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> Open(
      uint64_t ino) const override;
  engine::StatusOr<std::shared_ptr<FileReads>> Reads(uint64_t ino) const override;
  std::optional<uint64_t> NextFile(uint64_t ino) const override { return first_->NextFile(ino); }
  std::optional<uint64_t> FirstFileIn(uint64_t dir) const override {
    return first_->FirstFileIn(dir);
  }
  void NoteDamaged(uint64_t ino, const engine::Status& s) const override {
    ReaderFor(ino).NoteDamaged(ino, s);
  }
  // A read through a file's kept reader failed as a changed chain makes it fail (its data file
  // gone when opened again): the chain is opened again as an open would.
  bool ReadFailed(uint64_t ino, const engine::Status& s) const override;
  engine::StatusOr<std::string> Readlink(uint64_t ino) const override {
    return first_->Readlink(ino);
  }
  engine::StatusOr<std::vector<std::string>> XattrNames(uint64_t ino) const override {
    return first_->XattrNames(ino);
  }
  engine::StatusOr<std::string> Xattr(uint64_t ino, const std::string& name) const override {
    return first_->Xattr(ino, name);
  }
  uint64_t TotalBytes() const override { return first_->TotalBytes(); }
  uint64_t NumInodes() const override { return first_->NumInodes(); }

  // The view that reads the tree's files now (the first, or one opened again).
  std::shared_ptr<const BackupView> Now() const;
  // Seconds a failed renewal is remembered: the opens that fail meanwhile do not try again.
  static constexpr int64_t kRenewPauseNs = 1000000000;

 private:
  // The view that reads `ino`: the first for a file that is the top's own (.appended, the flat
  // manifest), else Now(), as this thread last saw it: no lock and no shared count on the read
  // path (the reference stays valid until this thread's next call).
  const BackupView& ReaderFor(uint64_t ino) const;
  // `op` on ReaderFor(ino); if it fails as a changed chain makes it fail (kBackupDamaged,
  // kBackupNotFound), on the view opened again, while Renew gives one.
  template <typename T, typename Op>
  engine::StatusOr<T> WithRenewal(uint64_t ino, const Op& op) const;
  // The view to try after `failed` failed: the one served now if another thread renewed it
  // meanwhile; else, if the chain of `failed` changed on disk, the backup opened again if it
  // still shows the same content; nullptr otherwise, and then for kRenewPauseNs.
  std::shared_ptr<const BackupView> Renew(const BackupView* failed) const;
  std::shared_ptr<const BackupView> OpenAgain(const BackupView& old) const;
  bool ChainChanged(const engine::ResolvedBackup& b) const;

  const std::shared_ptr<const BackupView> first_;
  const engine::ChainOptions chain_;
  const AttrOptions attr_;
  const Log log_;
  mutable std::mutex renew_mu_;  // One renewal at a time; taken before mu_.
  mutable std::mutex mu_;
  mutable std::shared_ptr<const BackupView> view_;  // Guarded by mu_; never null.
  mutable std::atomic<uint64_t> generation_{0};     // Counts the changes of view_.
  const uint64_t id_;                               // This view's, unique in the process.
  mutable int64_t paused_until_ns_ = 0;             // Guarded by renew_mu_.
};

}  // namespace stitchfs::fs
