#include "engine/base/path_check.h"

#include <gtest/gtest.h>

namespace stitchfs::engine {
namespace {

TEST(PathCheckTest, AcceptsNormalRelativePaths) {
  for (const char* p : {"a", "a/b", "data/db/t/all_1_1_0/x.bin", ".hidden", "a/..b", "...", "a/b..",
                        "..a/b", "a/.b/c", "a/.../b", "x/..y"}) {
    EXPECT_TRUE(CheckRelativePath(p).ok()) << p;
  }
}

TEST(PathCheckTest, RejectsUnsafeOrDegeneratePaths) {
  const std::pair<const char*, ErrorCode> bad[] = {
      {"", ErrorCode::kBackupDamaged},      {".", ErrorCode::kBackupDamaged},
      {"/a", ErrorCode::kInsecurePath},     {"..", ErrorCode::kInsecurePath},
      {"a/../b", ErrorCode::kInsecurePath}, {"a/..", ErrorCode::kInsecurePath},
      {"a//b", ErrorCode::kInsecurePath},   {"./a", ErrorCode::kInsecurePath},
      {"a/./b", ErrorCode::kInsecurePath},  {"a/", ErrorCode::kInsecurePath},
      {"/", ErrorCode::kInsecurePath},      {"a/b/..", ErrorCode::kInsecurePath},
      {"a/.", ErrorCode::kInsecurePath},    {"../a", ErrorCode::kInsecurePath},
      {"a/.//b", ErrorCode::kInsecurePath}, {"a/b//", ErrorCode::kInsecurePath},
  };
  for (const auto& [p, code] : bad) EXPECT_EQ(CheckRelativePath(p).code(), code) << p;
  EXPECT_EQ(CheckRelativePath(std::string_view("a\0b", 3)).code(), ErrorCode::kInsecurePath);
}

}  // namespace
}  // namespace stitchfs::engine
