// The archive codecs' libraries, loaded when first needed rather than linked.
#include "engine/backends/archive/codec_libraries.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/base/shared_library.h"

namespace stitchfs::engine {
namespace {

TEST(CodecLibrariesTest, EachLoadsOnceAndWorks) {
  auto zl = Zlib();
  ASSERT_TRUE(zl.ok()) << zl.status().ToString();
  EXPECT_EQ(*Zlib(), *zl) << "the same table every time";
  const std::string text = "123456789";
  EXPECT_EQ((*zl)->crc32(0, reinterpret_cast<const Bytef*>(text.data()), 9), 0xCBF43926u);
  auto zs = Zstd();
  ASSERT_TRUE(zs.ok()) << zs.status().ToString();
  EXPECT_TRUE((*zs)->is_error(static_cast<size_t>(-1)));
  EXPECT_TRUE(Lzma().ok());
  EXPECT_TRUE(Bzip2().ok());
}

// A library that cannot be loaded is a clear error naming it, its package and what needs it.
TEST(CodecLibrariesTest, AMissingLibraryIsAClearError) {
  auto missing = OpenSharedLibrary("libstitch-missing.so.9", "libstitch-missing9", "reading x");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(missing.status().message().find(
                "reading x needs libstitch-missing.so.9 (Debian package libstitch-missing9)"),
            std::string::npos)
      << missing.status().ToString();
}

}  // namespace
}  // namespace stitchfs::engine
