// Test helpers: temporary folders and a hand-controlled backup writer that produces exactly the
// manifest entries a test asks for (ClickHouse-format or stitchfs-format).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/base/checksum.h"
#include "engine/base/status_or.h"
#include "engine/format/manifest.h"

namespace stitchfs::testutil {

#define ASSERT_OK(expr)                     \
  do {                                      \
    ::stitchfs::engine::Status s_ = (expr); \
    ASSERT_TRUE(s_.ok()) << s_.ToString();  \
  } while (false)
#define EXPECT_OK(expr)                     \
  do {                                      \
    ::stitchfs::engine::Status s_ = (expr); \
    EXPECT_TRUE(s_.ok()) << s_.ToString();  \
  } while (false)

// A fresh folder under $TMPDIR, removed with its contents on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(std::string_view rel) const { return path_ + "/" + std::string(rel); }

 private:
  std::string path_;
};

void WriteFile(const std::string& path, std::string_view data);  // Creates parent folders.
std::string ReadFile(const std::string& path);
std::string RandomBytes(size_t n, uint32_t seed);
std::string NewUuid();

// Builds one backup folder entry by entry. Not thread-safe.
class FixtureBackup {
 public:
  FixtureBackup(std::string dir,
                engine::ChecksumAlgorithm alg = engine::ChecksumAlgorithm::kClickHouse);

  // Names `base` as this backup's base (relative File() locator when both share a parent).
  void SetBase(const FixtureBackup& base);
  void AddStored(std::string_view name, std::string_view content);
  // Bytes [0, base_size) from the base (which must hold that prefix), the rest stored here.
  void AddStitched(std::string_view name, std::string_view content, uint64_t base_size);
  // Whole file from the base; `explicit_base_size` writes <base_size> equal to size instead of
  // relying on the use_base default.
  void AddFromBase(std::string_view name, std::string_view content);
  // Same content as an earlier stored entry `data_of`: no data file of its own.
  void AddDuplicate(std::string_view name, std::string_view content, std::string_view data_of);
  void AddEmpty(std::string_view name);
  // Any entry; `data` (if not empty) is written to its data file.
  void AddRaw(const engine::FileEntry& e, std::string_view data = {});

  engine::Checksum Sum(std::string_view content) const;
  // Writes the data files added so far and the `.backup` manifest.
  engine::Status Write();
  // The manifest text Write() would produce.
  engine::StatusOr<std::string> ManifestXml() const;

  engine::ManifestHeader header;
  const std::string& dir() const { return dir_; }
  const std::string& uuid() const { return header.uuid; }

 private:
  struct Owned {
    std::string name, data_file;
    engine::FileEntry e;
  };
  std::string dir_;
  std::vector<Owned> entries_;
  std::vector<std::pair<std::string, std::string>> data_;  // data file -> bytes
};

}  // namespace stitchfs::testutil
