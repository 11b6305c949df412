#include "engine/location/s3_address.h"

#include <gtest/gtest.h>

#include <map>

#include "engine/backends/s3/s3_config.h"

namespace stitchfs::engine {
namespace {

TEST(S3AddressTest, ParsesEveryStyle) {
  auto a = ParseS3Address("s3://bucket/backups/b1/");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->bucket, "bucket");
  EXPECT_EQ(a->key, "backups/b1");
  EXPECT_EQ(a->endpoint, "");
  EXPECT_EQ(a->Location(), "s3://bucket/backups/b1");
  EXPECT_EQ(a->ObjectKey(".backup"), "backups/b1/.backup");

  // A ClickHouse locator's URL: userinfo and query dropped, as newer ClickHouse strips them.
  auto path = ParseS3LocatorUrl("http://user:pw@127.0.0.1:7480/bk/a%20b/c?X-Amz-Credential=x");
  ASSERT_TRUE(path.ok());
  EXPECT_EQ(path->endpoint, "http://127.0.0.1:7480");
  EXPECT_EQ(path->bucket, "bk");
  EXPECT_EQ(path->key, "a b/c");
  EXPECT_FALSE(path->virtual_hosted);
  EXPECT_EQ(path->Location(), "http://127.0.0.1:7480/bk/a%20b/c");  // No userinfo, no query.

  auto vh = ParseS3Address("https://my-bucket.s3.eu-west-1.amazonaws.com/backups/b1");
  ASSERT_TRUE(vh.ok());
  EXPECT_TRUE(vh->virtual_hosted);
  EXPECT_EQ(vh->bucket, "my-bucket");
  EXPECT_EQ(vh->region, "eu-west-1");
  EXPECT_EQ(vh->key, "backups/b1");
  EXPECT_EQ(vh->Location(), "https://my-bucket.s3.eu-west-1.amazonaws.com/backups/b1");

  auto aws_path = ParseS3Address("https://s3.us-west-2.amazonaws.com/bk/x");
  ASSERT_TRUE(aws_path.ok());
  EXPECT_FALSE(aws_path->virtual_hosted);
  EXPECT_EQ(aws_path->bucket, "bk");
  EXPECT_EQ(aws_path->region, "us-west-2");

  auto root = ParseS3Address("s3://bucket");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->key, "");
  EXPECT_EQ(root->ObjectKey(".backup"), ".backup");
}

TEST(S3AddressTest, RefusesAmbiguousOrEscapingKeys) {
  for (const char* bad : {"s3://", "s3:///key", "http://host/", "s3://b/a/../c", "s3://b/./c",
                          "s3://b/a//c", "s3://b/a%2", "ftp://b/c", "s3://b/a%00b"}) {
    EXPECT_FALSE(ParseS3Address(bad).ok()) << bad;
  }
}

TEST(S3AddressTest, EncodesAsSigV4Wants) {
  EXPECT_EQ(UriEncode("a b/c~d=e&f", true), "a%20b/c~d%3De%26f");
  EXPECT_EQ(UriEncode("a/b", false), "a%2Fb");
}

TEST(S3ConfigTest, FollowsTheAwsOrder) {
  std::map<std::string, std::string> env{
      {"AWS_ENDPOINT_URL", "http://e:1/"}, {"AWS_ENDPOINT_URL_S3", "http://s3:2"},
      {"AWS_DEFAULT_REGION", "r2"},        {"AWS_ACCESS_KEY_ID", "K"},
      {"AWS_SECRET_ACCESS_KEY", "S"},      {"HOME", "/nonexistent"}};
  auto lookup = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c = LoadS3Config({}, lookup);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->endpoint, "http://s3:2");
  EXPECT_EQ(c->region, "r2");
  EXPECT_EQ(c->credentials.access_key, "K");
  EXPECT_EQ(c->credentials.source, "environment");
  const S3Settings s{"http://opt:3", "r9", "", ""};
  c = LoadS3Config(s, lookup);
  EXPECT_EQ(c->endpoint, "http://opt:3");
  EXPECT_EQ(c->region, "r9");
  env["STITCH_S3_MAX_ATTEMPTS"] = "0";
  EXPECT_EQ(LoadS3Config({}, lookup).status().code(), ErrorCode::kInvalidArgument);
}

TEST(S3ConfigTest, ReadsSharedFilesAndCredentialFiles) {
  const std::string dir = testing::TempDir() + "/s3cfg";
  std::system(("mkdir -p " + dir + "/.aws").c_str());
  FILE* f = std::fopen((dir + "/.aws/credentials").c_str(), "w");
  std::fputs(
      "[default]\naws_access_key_id = D\naws_secret_access_key = DS\n"
      "[work]\naws_access_key_id=W\naws_secret_access_key=WS\naws_session_token = T\n",
      f);
  std::fclose(f);
  f = std::fopen((dir + "/.aws/config").c_str(), "w");
  std::fputs("[profile work]\nregion = eu-north-1\nendpoint_url = http://w:9\n", f);
  std::fclose(f);
  std::map<std::string, std::string> env{{"HOME", dir}, {"AWS_PROFILE", "work"}};
  auto lookup = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c = LoadS3Config({}, lookup);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key, "W");
  EXPECT_EQ(c->credentials.session_token, "T");
  EXPECT_EQ(c->region, "eu-north-1");
  EXPECT_EQ(c->endpoint, "http://w:9");
  S3Settings s;
  s.credentials_file = dir + "/.aws/credentials";
  s.profile = "default";
  c = LoadS3Config(s, lookup);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->credentials.access_key, "D");
  EXPECT_EQ(c->credentials.source.find("DS"), std::string::npos);
  s.credentials_file = dir + "/missing";
  EXPECT_EQ(LoadS3Config(s, lookup).status().code(), ErrorCode::kInvalidArgument);
}

TEST(S3AddressTest, MessagesNeverShowAUserAndPassword) {
  EXPECT_EQ(WithoutUserinfo("https://key:secret@host:9000/b/k"), "https://host:9000/b/k");
  EXPECT_EQ(WithoutUserinfo("http://host/b/user@example"), "http://host/b/user@example");
  EXPECT_EQ(WithoutUserinfo("https://host"), "https://host");
  auto bad = ParseS3Address("https://key:secret@/b/k");  // Refused, never shown.
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().find("secret"), std::string::npos);
}

TEST(S3AddressTest, ListedKeysAreDecodedWithPlusAsASpace) {
  EXPECT_EQ(*PercentDecode("enc%2Fa%20b%2Bc%0Ad", true), "enc/a b+c\nd");
  EXPECT_EQ(*PercentDecode("a+b", true), "a b");
  EXPECT_EQ(*PercentDecode("a+b"), "a+b");
  EXPECT_FALSE(PercentDecode("a%2", true).ok());
  EXPECT_FALSE(PercentDecode("a%zz", true).ok());
}

}  // namespace
}  // namespace stitchfs::engine
