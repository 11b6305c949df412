#include "fs/file_reads.h"

namespace stitchfs::fs {

FileReads::FileReads(std::shared_ptr<const engine::RandomAccessFile> reader, NewCheck new_check,
                     std::optional<engine::Status> known)
    : reader_(std::move(reader)), new_check_(std::move(new_check)) {
  if (new_check_)
    check_ = std::make_shared<SequentialCheck>(new_check_(), reader_, std::move(known));
}

std::shared_ptr<SequentialCheck> FileReads::CheckFor(uint64_t offset, uint64_t length) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!check_) return nullptr;
  const auto now = std::chrono::steady_clock::now();
  if (offset == 0 && !check_->Unfed()) {
    std::optional<engine::Status> known = check_->result();
    if (known && known->ok()) known.reset();  // Only a mismatch carries over.
    const uint64_t size = check_->size(), end_alone = check_->DroppedEnd();
    check_ = std::make_shared<SequentialCheck>(new_check_(), reader_, std::move(known));
    // A read of the end alone: the kernel may keep its pages (`tail`, then this read).
    check_->ReadElsewhere(end_alone, size - end_alone);
    for (const Recent& r : recent_) {
      if (now - r.at < kRecent) check_->ReadElsewhere(r.offset, r.length);
    }
    recent_.clear();
  } else if (offset != 0 && length != 0 && check_->Over()) {
    if (recent_.size() >= kMaxRecent) recent_.pop_front();
    recent_.push_back({offset, length, now});
  }
  return check_;
}

engine::StatusOr<std::shared_ptr<FileReads>> FileReadsCache::Get(uint64_t ino,
                                                                 const Make& make) const {
  Shard& s = shards_[ino % kShards];
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (auto* kept = s.kept.Get(ino)) return *kept;
  }
  ASSIGN_OR_RETURN(std::shared_ptr<FileReads> made, make());
  std::lock_guard<std::mutex> lock(s.mu);
  if (auto* kept = s.kept.Get(ino)) return *kept;  // Another read made it meanwhile: one check.
  s.kept.Put(ino, made);
  s.kept.Trim(engine::LruLimits{.max_entries = kKept / kShards});
  return made;
}

}  // namespace stitchfs::fs
