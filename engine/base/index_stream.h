// IndexFileWriter and IndexFileReader: an index file (index_codec.h, the same layout and checks)
// written to and read from an fd one section after another, hashed on the way and never whole
// in memory: a manifest cache file may be hundreds of megabytes, and neither storing nor
// loading one may hold it a second time beside the parsed manifest.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/index_codec.h"

struct XXH3_state_s;

namespace stitchfs::engine {

// Frees an XXH3 state (the writer's and reader's running checksums).
struct IndexHashDeleter {
  void operator()(XXH3_state_s* s) const;
};

// Not thread-safe.
class IndexFileWriter {
 public:
  // Writes a file of `kind` to `fd` from offset 0 with the sections `tag, length` (all
  // required), in this order; the lengths are declared first, so the header and table are known
  // before the sections' bytes.
  IndexFileWriter(int fd, const IndexKind& kind,
                  const std::vector<std::pair<uint32_t, uint64_t>>& sections);

  // Appends `bytes` to section `tag`: the section being written, or a later one once those
  // before it have all their bytes. A wrong order or more than the declared length is an
  // error that Finish reports (nothing more is written after it).
  void Put(uint32_t tag, std::string_view bytes);
  template <typename T>
  void PutArray(uint32_t tag, std::span<const T> records) {
    static_assert(std::is_trivially_copyable_v<T>);
    Put(tag, {reinterpret_cast<const char*>(records.data()), records.size_bytes()});
  }
  template <typename T>
  void PutRecord(uint32_t tag, const T& record) {
    PutArray(tag, std::span<const T>(&record, 1));
  }

  // Writes what is buffered, then the header with the checksum: kIOError if a write failed,
  // kInternal if a section did not get exactly its declared length.
  Status Finish();

 private:
  void Append(std::string_view bytes);
  void PadTo(uint64_t offset);
  bool Advance(size_t to);  // Moves to section `to`: false if the current one is not complete.
  void Flush();

  int fd_;
  std::string prefix_;  // Header and table.
  std::vector<IndexLayout::Section> sections_;
  size_t current_ = 0;    // The section being written.
  uint64_t written_ = 0;  // Of it.
  uint64_t flushed_ = 0;  // File offset where buf_ goes.
  std::string buf_;
  std::unique_ptr<XXH3_state_s, IndexHashDeleter> state_;
  Status status_;
};

// Not thread-safe; movable.
class IndexFileReader {
 public:
  // The header and section table of the file `fd`, checked as a file of `kind` (index_codec.h)
  // of the length fstat gives: kBackupDamaged saying what is wrong, kIOError if reading fails.
  static StatusOr<IndexFileReader> Open(int fd, const IndexKind& kind);

  // The length of section `tag`, or the number of records of `size` bytes it holds:
  // kBackupDamaged if the file has no such section or it is not a whole number of records.
  StatusOr<uint64_t> Length(uint32_t tag) const;
  StatusOr<uint64_t> Count(uint32_t tag, size_t size) const;

  // The next `dst.size()` bytes of section `tag`, copied. Sections are read in the order of the
  // file (kInternal for a section before one already read); kBackupDamaged past the section's
  // end or if the file is cut short; kIOError if reading fails.
  Status Read(uint32_t tag, std::span<char> dst);
  template <typename T>
  Status ReadRecord(uint32_t tag, T* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    return Read(tag, {reinterpret_cast<char*>(v), sizeof(T)});
  }
  // All of section `tag` as records.
  template <typename T>
  Status ReadArray(uint32_t tag, std::vector<T>* v) {
    static_assert(std::is_trivially_copyable_v<T>);
    ASSIGN_OR_RETURN(const uint64_t n, Count(tag, sizeof(T)));
    v->resize(n);
    return Read(tag, {reinterpret_cast<char*>(v->data()), n * sizeof(T)});
  }

  // Reads the rest of the file and checks the checksum: kBackupDamaged if it does not match.
  // Nothing read may be trusted before this succeeds.
  Status Finish();

 private:
  IndexFileReader(int fd, const IndexKind& kind, IndexLayout::Header h,
                  std::vector<IndexLayout::Section> sections);
  StatusOr<size_t> Find(uint32_t tag) const;
  uint64_t position() const { return fetched_ - (have_ - used_); }
  Status Take(char* dst, uint64_t n);  // `dst` null: skips.
  Status Fetch(char* dst, uint64_t n);

  static constexpr size_t kBuffer = 1 << 20;
  int fd_;
  const IndexKind* kind_;
  IndexLayout::Header h_;
  std::vector<IndexLayout::Section> sections_;
  std::vector<uint64_t> read_;  // Per section, the bytes read.
  std::unique_ptr<XXH3_state_s, IndexHashDeleter> state_;
  std::unique_ptr<char[]> buf_;
  uint64_t have_ = 0, used_ = 0;  // Bytes in buf_, and of them consumed.
  uint64_t fetched_ = 0;          // File offset of the next byte to read from fd_.
};

}  // namespace stitchfs::engine
