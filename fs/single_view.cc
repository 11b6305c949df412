#include "fs/single_view.h"

#include "engine/read/chain_walk.h"
#include "engine/read/open_resolved.h"

namespace stitchfs::fs {

SingleView::SingleView(std::shared_ptr<const BackupView> view, engine::ChainOptions chain,
                       AttrOptions attr, Log log)
    : chain_(std::move(chain)), attr_(attr), log_(std::move(log)), view_(std::move(view)) {}

std::shared_ptr<const BackupView> SingleView::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

template <typename T, typename Op>
engine::StatusOr<T> SingleView::WithRenewal(const Op& op) const {
  std::shared_ptr<const BackupView> view = Now();
  engine::StatusOr<T> out = op(*view);
  for (int attempt = 0; !out.ok() && attempt < kRenewAttempts; ++attempt) {
    std::shared_ptr<const BackupView> again = Renew(view);
    if (!again) break;
    view = std::move(again);
    out = op(*view);
  }
  return out;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> SingleView::Open(
    uint64_t ino) const {
  return WithRenewal<std::shared_ptr<const engine::RandomAccessFile>>(
      [ino](const BackupView& v) { return v.Open(ino); });
}

engine::StatusOr<std::shared_ptr<FileReads>> SingleView::Reads(uint64_t ino) const {
  return WithRenewal<std::shared_ptr<FileReads>>(
      [ino](const BackupView& v) { return v.Reads(ino); });
}

std::shared_ptr<const BackupView> SingleView::Renew(
    const std::shared_ptr<const BackupView>& failed) const {
  std::lock_guard<std::mutex> renewing(renew_mu_);
  if (std::shared_ptr<const BackupView> now = Now(); now != failed) return now;
  if (!ChainChanged(failed->backup())) return nullptr;  // Damage, not a change: the error stands.
  std::shared_ptr<const BackupView> fresh = OpenAgain(*failed);
  if (!fresh) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  view_ = fresh;
  return fresh;
}

// True if a `.backup` of the chain of `b` is gone or is another file than the one opened.
bool SingleView::ChainChanged(const engine::ResolvedBackup& b) const {
  for (size_t l = 0; l < b.depth(); ++l) {
    const engine::ResolvedBackup::Level& level = b.level(l);
    auto now = chain_.storage->StatManifest(level.path());
    if (!now.ok() || !now->has_value() || **now != level.manifest) return true;
  }
  return false;
}

std::shared_ptr<const BackupView> SingleView::OpenAgain(const BackupView& old) const {
  const engine::ResolvedBackup& was = old.backup();
  const std::string& path = was.top().path();
  auto top = engine::OpenBackup(path, chain_);
  if (!top.ok()) return nullptr;
  // The same manifest file: the same tree (its table serves again); another one (the backup
  // flattened in place) must show the same content, as its signature says.
  const bool same = (*top)->identity() == was.top().identity();
  std::shared_ptr<const engine::Backup> t = same ? was.shared_top() : *top;
  if (!same && t->manifest().ContentSignature() != was.top().manifest().ContentSignature()) {
    if (log_) log_("Backup " + path + " shows other content now: not served in place of the first");
    return nullptr;
  }
  auto resolved = engine::OpenResolved(t, chain_);
  if (!resolved.ok()) return nullptr;
  InodeTable table = same ? old.table() : InodeTable::Build(t->manifest());
  if (log_) log_("Backup " + path + ": its chain changed on disk; opened again through it");
  return std::make_shared<const BackupView>(*resolved, std::move(table), attr_);
}

}  // namespace stitchfs::fs
