#include "fs/single_view.h"

#include <chrono>

#include "engine/read/chain_walk.h"
#include "engine/read/open_resolved.h"

namespace stitchfs::fs {
namespace {

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// What opening a file gives when the chain changed under it: a data file or folder gone or
// replaced (kBackupDamaged), a backup gone (kBackupNotFound). Anything else (no such inode, an
// I/O error, too many open files) is no reason to look at the chain.
bool MayBeAChangedChain(const engine::Status& s) {
  return s.code() == engine::ErrorCode::kBackupDamaged ||
         s.code() == engine::ErrorCode::kBackupNotFound;
}

uint64_t NextId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

SingleView::SingleView(std::shared_ptr<const BackupView> view, engine::ChainOptions chain,
                       AttrOptions attr, Log log)
    : first_(view),
      chain_(std::move(chain)),
      attr_(attr),
      log_(std::move(log)),
      view_(std::move(view)),
      id_(NextId()) {}

std::shared_ptr<const BackupView> SingleView::Now() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

const BackupView& SingleView::ReaderFor(uint64_t ino) const {
  if (!first_->ReadsThroughChain(ino)) return *first_;
  struct Seen {
    uint64_t owner = 0, generation = 0;
    std::shared_ptr<const BackupView> view;
  };
  thread_local Seen seen;
  const uint64_t g = generation_.load(std::memory_order_acquire);
  if (seen.owner != id_ || seen.generation != g || !seen.view) {
    seen.view = Now();
    seen.owner = id_;
    seen.generation = g;
  }
  return *seen.view;
}

template <typename T, typename Op>
engine::StatusOr<T> SingleView::WithRenewal(uint64_t ino, const Op& op) const {
  const BackupView* view = &ReaderFor(ino);
  engine::StatusOr<T> out = op(*view);
  if (!first_->ReadsThroughChain(ino)) return out;  // The top's own bytes: never read anew.
  std::shared_ptr<const BackupView> held;           // Keeps a view opened again alive here.
  for (int attempt = 0; !out.ok() && MayBeAChangedChain(out.status()) && attempt < kRenewAttempts;
       ++attempt) {
    held = Renew(view);
    if (!held) break;
    view = held.get();
    out = op(*view);
  }
  return out;
}

namespace {

// The view generation this thread's last SingleView::Reads went through (ReadFailed).
struct LastReads {
  uint64_t owner = 0, generation = 0;
};
thread_local LastReads last_reads;

}  // namespace

bool SingleView::ReadFailed(uint64_t ino, const engine::Status& s) const {
  if (!first_->ReadsThroughChain(ino) || !MayBeAChangedChain(s)) return false;
  // Another read opened the chain again since this one got its reader: try the new view.
  if (last_reads.owner == id_ && last_reads.generation != generation_.load()) return true;
  return Renew(&ReaderFor(ino)) != nullptr;
}

engine::StatusOr<std::shared_ptr<const engine::RandomAccessFile>> SingleView::Open(
    uint64_t ino) const {
  return WithRenewal<std::shared_ptr<const engine::RandomAccessFile>>(
      ino, [ino](const BackupView& v) { return v.Open(ino); });
}

engine::StatusOr<std::shared_ptr<FileReads>> SingleView::Reads(uint64_t ino) const {
  // The view as it was before: a read renewed here (or by another thread meanwhile) retries
  // once more at worst, through the view that is current then.
  last_reads = {id_, generation_.load(std::memory_order_acquire)};
  return WithRenewal<std::shared_ptr<FileReads>>(
      ino, [ino](const BackupView& v) { return v.Reads(ino); });
}

std::shared_ptr<const BackupView> SingleView::Renew(const BackupView* failed) const {
  std::lock_guard<std::mutex> renewing(renew_mu_);
  if (std::shared_ptr<const BackupView> now = Now(); now.get() != failed) return now;
  if (SteadyNs() < paused_until_ns_) return nullptr;
  std::shared_ptr<const BackupView> fresh;
  if (ChainChanged(failed->backup())) fresh = OpenAgain(*failed);
  if (!fresh) {  // Damage, not a change (or not yet openable): the error stands for a while.
    paused_until_ns_ = SteadyNs() + kRenewPauseNs;
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu_);
  view_ = fresh;
  generation_.fetch_add(1, std::memory_order_release);
  return fresh;
}

// True if a `.backup` of the chain of `b` is gone or is another file than the one opened. One
// that cannot be looked at now (object storage unreachable) counts as unchanged.
bool SingleView::ChainChanged(const engine::ResolvedBackup& b) const {
  for (size_t l = 0; l < b.depth(); ++l) {
    const engine::ResolvedBackup::Level& level = b.level(l);
    auto now = chain_.storage->StatManifest(level.path());
    if (now.ok() && (!now->has_value() || **now != level.manifest)) return true;
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
    if (log_) log_("Backup " + path + " shows other content now: its files are not read from it");
    return nullptr;
  }
  auto resolved = engine::OpenResolved(t, chain_);
  if (!resolved.ok()) return nullptr;
  if (log_) log_("Backup " + path + ": its chain changed on disk; files are read through it anew");
  if (same) return std::make_shared<const BackupView>(*resolved, old);
  return std::make_shared<const BackupView>(*resolved, InodeTable::Build(t->manifest()), attr_);
}

}  // namespace stitchfs::fs
