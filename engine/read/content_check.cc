#include "engine/read/content_check.h"

#include <set>

#include "engine/base/interrupt.h"

namespace stitchfs::engine {

ContentCheck::ContentCheck(const ResolvedBackup& chain, size_t entry,
                           std::shared_ptr<const void> keep)
    : chain_(chain),
      keep_(std::move(keep)),
      entry_(entry),
      size_(chain.top().manifest().entry(entry).size),
      base_size_(chain.top().manifest().entry(entry).base_size),
      hasher_(chain.top().header().algorithm) {
  if (base_size_ >= size_) base_size_ = 0;  // Whole from the base: the full checksum says it.
}

void ContentCheck::Update(std::string_view bytes) {
  const uint64_t at = hasher_.bytes();
  if (base_size_ > 0 && at < base_size_ && at + bytes.size() >= base_size_) {
    const size_t head = static_cast<size_t>(base_size_ - at);
    hasher_.Update(bytes.substr(0, head));
    at_base_ = hasher_.Digest();
    bytes.remove_prefix(head);
  }
  hasher_.Update(bytes);
}

std::string ContentCheck::Holders(uint64_t from, uint64_t to) const {
  std::set<uint32_t> levels;
  uint64_t at = 0;
  for (const ResolvedBackup::FlatExtent& x : chain_.Extents(entry_)) {
    if (at < to && at + x.length > from) levels.insert(x.level);
    at += x.length;
  }
  if (levels.empty()) levels.insert(0);  // Its own data file, whole.
  std::string out;
  for (uint32_t l : levels) {
    out += (out.empty() ? "" : (l == *levels.rbegin() ? " or " : ", ")) + chain_.level(l).path();
  }
  return (levels.size() > 1 ? "one of the backups " : "backup ") + out;
}

std::string ContentCheck::Difference() const {
  if (hasher_.bytes() != size_) {
    return "reads " + std::to_string(hasher_.bytes()) + " bytes, expected " + std::to_string(size_);
  }
  const Checksum want = chain_.top().manifest().entry(entry_).checksum;
  const Checksum got = hasher_.Digest();
  if (got == want) return "";
  return "checksum mismatch (computed " + got.ToHex() + ", the manifest says " + want.ToHex() + ")";
}

Status ContentCheck::FinishCopy() const {
  const std::string d = Difference();
  return d.empty() ? Status::OK() : Status::BackupDamaged(d);
}

Status ContentCheck::Finish() const {
  const std::string d = Difference();
  if (d.empty()) return Status::OK();
  const FileEntry e = chain_.top().manifest().entry(entry_);
  const std::string what = chain_.top().Prefix() + "file \"" + std::string(e.name) + "\"";
  if (hasher_.bytes() != size_) return Status::BackupDamaged(what + " " + d);
  const bool base_bad = base_size_ > 0 && at_base_ != e.base_checksum;
  const uint64_t from = base_bad ? 0 : base_size_;
  const uint64_t to = base_bad ? base_size_ : size_;
  return Status::BackupDamaged(what + ": " + d + "; the bad bytes are in " + Holders(from, to) +
                               ", bytes [" + std::to_string(from) + ", " + std::to_string(to) +
                               ") of the file");
}

namespace {

// One read of all of `file` through `check` (CheckFile's).
Status ReadThrough(ContentCheck& check, const RandomAccessFile& file, std::span<char> buf,
                   const std::function<void(uint64_t)>& piece) {
  for (uint64_t off = 0; off < file.size();) {
    RETURN_IF_ERROR(CheckStop());  // A command that asked to stop on a signal (interrupt.h).
    ASSIGN_OR_RETURN(size_t n, file.ReadAt(off, buf));
    if (n == 0) break;  // Finish says how short it is.
    check.Update(std::string_view(buf.data(), n));
    off += n;
    if (piece) piece(n);
  }
  return Status::OK();
}

}  // namespace

Status CheckFile(const ResolvedBackup& chain, size_t entry, const RandomAccessFile& file,
                 std::span<char> buf, const std::function<void(uint64_t)>& piece, bool copy) {
  Status s;
  for (int pass = 0; pass < 2; ++pass) {
    ContentCheck check(chain, entry);
    RETURN_IF_ERROR(ReadThrough(check, file, buf, pass == 0 ? piece : nullptr));
    s = copy ? check.FinishCopy() : check.Finish();
    if (s.ok() || !file.DropCached()) return s;
    // Bytes kept on the way (a block cache, a read-ahead) were dropped: read from the storage.
  }
  return s.WithSuffix(" (read twice, the second time with nothing cached)");
}

}  // namespace stitchfs::engine
