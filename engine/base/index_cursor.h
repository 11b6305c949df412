// IndexCursor: bounds-checked reads of one section of an index file (index_codec.h). Every read
// takes bytes from the front of what is left or fails with kBackupDamaged naming the file's
// kind, the section and what was wanted; nothing is read out of bounds, and no count is
// accepted that the section's bytes could not hold, so nothing is allocated beyond the input.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "engine/base/status.h"

namespace stitchfs::engine {

// A tag as its four characters when they are printable, else as hex ("0x0000beef").
std::string IndexTagName(uint32_t tag);

// Thread-compatible; views the bytes it was made on, which must outlive it and its views.
class IndexCursor {
 public:
  // Over `bytes`, section `tag` of a file of kind `kind` (for messages).
  IndexCursor(std::string_view bytes, std::string_view kind, uint32_t tag)
      : rest_(bytes), size_(bytes.size()), kind_(kind), tag_(tag) {}

  // A value of that width, as the machine that wrote it stores it.
  Status U8(uint8_t* v) { return Record(v); }
  Status U32(uint32_t* v) { return Record(v); }
  Status U64(uint64_t* v) { return Record(v); }
  // The next `n` bytes, viewed in place.
  Status Bytes(uint64_t n, std::string_view* v);
  // A string written as its u32 length, then its bytes.
  Status String(std::string* s);
  // A count of items that each take at least `min_bytes` (> 0) of what is left: a count the
  // section cannot hold is refused before anything is allocated for it.
  Status Count(uint64_t* n, size_t min_bytes);

  // One record, copied (any alignment).
  template <typename T>
  Status Record(T* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    std::string_view s;
    RETURN_IF_ERROR(Bytes(sizeof(T), &s));
    std::memcpy(v, s.data(), sizeof(T));
    return Status::OK();
  }
  // The next `n` records, viewed in place: refused if their bytes are not aligned for T.
  template <typename T>
  Status View(uint64_t n, std::span<const T>* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (n > rest_.size() / sizeof(T)) return Short(n, sizeof(T));
    if (reinterpret_cast<uintptr_t>(rest_.data()) % alignof(T) != 0) return Misaligned();
    std::string_view s;
    RETURN_IF_ERROR(Bytes(n * sizeof(T), &s));
    *v = {reinterpret_cast<const T*>(s.data()), static_cast<size_t>(n)};
    return Status::OK();
  }
  // All that is left as records, viewed in place or copied: refused unless it is a whole number
  // of them.
  template <typename T>
  Status ViewRest(std::span<const T>* v) {
    RETURN_IF_ERROR(WholeRecords(sizeof(T)));
    return View(rest_.size() / sizeof(T), v);
  }
  template <typename T>
  Status CopyRest(std::vector<T>* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    RETURN_IF_ERROR(WholeRecords(sizeof(T)));
    v->resize(rest_.size() / sizeof(T));
    if (!v->empty()) std::memcpy(v->data(), rest_.data(), rest_.size());
    rest_ = {};
    return Status::OK();
  }

  // OK if every byte was read, else kBackupDamaged (bytes left over).
  Status End() const;
  // The bytes not read yet.
  uint64_t left() const { return rest_.size(); }

 private:
  Status Damaged(const std::string& what) const;
  Status Short(uint64_t n, uint64_t size) const;
  Status Misaligned() const;
  Status WholeRecords(size_t size) const;

  std::string_view rest_;
  size_t size_;  // Of the whole section.
  std::string_view kind_;
  uint32_t tag_;
};

}  // namespace stitchfs::engine
