#include "engine/base/index_cursor.h"

#include <cstdio>

namespace stitchfs::engine {

std::string IndexTagName(uint32_t tag) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    const auto c = static_cast<char>(tag >> (8 * i) & 0xff);
    if (c < 0x20 || c > 0x7e) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", tag);
      return hex;
    }
    s.push_back(c);
  }
  return s;
}

Status IndexCursor::Bytes(uint64_t n, std::string_view* v) {
  if (n > rest_.size()) return Short(n, 1);
  *v = rest_.substr(0, n);
  rest_.remove_prefix(n);
  return Status::OK();
}

Status IndexCursor::String(std::string* s) {
  uint32_t n;
  RETURN_IF_ERROR(U32(&n));
  std::string_view v;
  RETURN_IF_ERROR(Bytes(n, &v));
  s->assign(v);
  return Status::OK();
}

Status IndexCursor::Count(uint64_t* n, size_t min_bytes) {
  RETURN_IF_ERROR(U64(n));
  if (min_bytes == 0) min_bytes = 1;
  if (*n > rest_.size() / min_bytes) return Short(*n, min_bytes);
  return Status::OK();
}

Status IndexCursor::End() const {
  if (rest_.empty()) return Status::OK();
  return Damaged(std::to_string(rest_.size()) + " bytes left over");
}

Status IndexCursor::Damaged(const std::string& what) const {
  return Status::BackupDamaged(std::string(kind_) + ": section " + IndexTagName(tag_) + ": " +
                               what);
}

Status IndexCursor::Short(uint64_t n, uint64_t size) const {
  return Damaged(std::to_string(n) +
                 (size == 1 ? " bytes" : " records of " + std::to_string(size) + " bytes") +
                 " wanted at " + std::to_string(size_ - rest_.size()) + ", " +
                 std::to_string(rest_.size()) + " left");
}

Status IndexCursor::Misaligned() const {
  return Damaged("records at " + std::to_string(size_ - rest_.size()) +
                 " are not aligned to be viewed in place");
}

Status IndexCursor::WholeRecords(size_t size) const {
  if (rest_.size() % size == 0) return Status::OK();
  return Damaged(std::to_string(rest_.size()) + " bytes are not a whole number of records of " +
                 std::to_string(size));
}

}  // namespace stitchfs::engine
