// libcurl is loaded when object storage is first used, not linked: loaded once, the same
// functions every time; a library that is missing or is not libcurl is a clear error naming
// the library and its package, never a crash.
#include "engine/backends/s3/curl_library.h"

#include <gtest/gtest.h>

#include <string>

namespace stitchfs::engine {
namespace {

TEST(CurlLibraryTest, LoadsOnceAndGivesTheSameFunctions) {
  auto a = Curl();
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  auto b = Curl();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(&LoadedCurl(), *a);
  CURL* c = (*a)->easy_init();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*a)->easy_setopt(c, CURLOPT_URL, "http://127.0.0.1:1/"), CURLE_OK);
  (*a)->easy_cleanup(c);
  EXPECT_STREQ((*a)->easy_strerror(CURLE_OK), "No error");
}

TEST(CurlLibraryTest, AMissingLibraryIsAClearError) {
  auto r = LoadCurlLibrary("libcurl-stitchfs-missing.so.4");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotSupported);
  const std::string m = r.status().message();
  EXPECT_NE(m.find("object storage needs libcurl-stitchfs-missing.so.4"), std::string::npos) << m;
  EXPECT_NE(m.find("libcurl4"), std::string::npos) << m;
}

TEST(CurlLibraryTest, ALibraryThatIsNotLibcurlIsRefused) {
  auto r = LoadCurlLibrary("libz.so.1");  // Loads, but has none of curl's functions.
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kNotSupported);
  EXPECT_NE(r.status().message().find("lacks a function"), std::string::npos);
}

}  // namespace
}  // namespace stitchfs::engine
