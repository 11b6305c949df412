// Helpers shared by the libFuzzer targets in fuzz/: an in-memory file to hand bytes to code that
// reads a file descriptor, checks that abort with a message (so libFuzzer records the input),
// and walks over a parsed Manifest that exercise its lookups and check what the reader promises.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/format/manifest.h"

namespace stitchfs::fuzz {

// Prints "fuzz check failed: <what>" (and `detail` when given) and aborts.
[[noreturn]] void Fail(std::string_view what, std::string_view detail = {});

// Aborts with `what` unless `cond` holds.
inline void Require(bool cond, std::string_view what, std::string_view detail = {}) {
  if (!cond) Fail(what, detail);
}

// One memfd, reused across runs (a fuzzer runs millions of inputs: no fd per input).
class MemFile {
 public:
  MemFile();
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the content with `data` and moves the offset to 0. Returns the fd.
  int Set(std::string_view data);
  // Moves the offset back to 0 (for readers that use read(2)). Returns the fd.
  int Rewind();
  // The whole content, read back.
  std::string Contents() const;
  int fd() const { return fd_; }

 private:
  int fd_;
};

// Walks every entry, node and missing file, calls FindByName, FindByContent, IsContentRep,
// by_name(), LinkLeaders and a Hasher of the manifest's algorithm, and aborts unless what
// ParseManifest and the cache promise holds: safe names, base_size <= size <= 2^63-1, fields
// that agree with each other, metadata in range, a valid header, lookups that return the first
// entry of a name or content, by_name() sorted and complete, consistent hard links, as many
// missing files as the header says, every name once and none under a file or a symlink.
void ExerciseManifest(const engine::Manifest& m);

// Empty if `a` and `b` have the same entries (every field, in order), nodes and missing files;
// otherwise a description of the first difference.
std::string DiffEntriesAndNodes(const engine::Manifest& a, const engine::Manifest& b);

// Empty if the headers are equal in every field; otherwise the first field that differs.
std::string DiffHeaders(const engine::ManifestHeader& a, const engine::ManifestHeader& b);

// `s` with bytes outside printable ASCII as \xNN, cut to `max` bytes (for messages).
std::string Printable(std::string_view s, size_t max = 200);

}  // namespace stitchfs::fuzz
