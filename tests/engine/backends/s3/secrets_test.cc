// No credential in an address, a message or a file stitch writes: addresses refuse them (and a
// query, a fragment, needless escapes), messages redact them, base locators are kept without
// them, and a locator that does not parse is the backup's damage, shown without its text.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/backends/s3/s3_config.h"
#include "engine/format/data_file_name.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/storage/base_candidates.h"

namespace stitchfs::engine {
namespace {

constexpr char kSecret[] = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRET";

std::string WithSecret(const std::string& before, const std::string& after) {
  return before + kSecret + after;
}

bool Hidden(const std::string& text) {
  return text.find("bPxRfiCY") == std::string::npos && text.find("wJalr") == std::string::npos;
}

TEST(UrlCredentialsTest, AddressesWithCredentialsAreRefusedWithoutShowingThem) {
  for (const std::string& url :
       {WithSecret("http://AKID:", "@127.0.0.1:7480/bk/p"), WithSecret("s3://AKID:", "@bk/p"),
        WithSecret("https://AKID:", "@bk.s3.eu-west-1.amazonaws.com/p"),
        WithSecret("s3://bk/p?X-Amz-Signature=", ""), WithSecret("http://h:1/bk/p?sig=", "")}) {
    auto a = ParseS3Address(url);
    ASSERT_FALSE(a.ok()) << url;
    EXPECT_EQ(a.status().code(), ErrorCode::kInvalidArgument);
    EXPECT_TRUE(Hidden(a.status().message())) << a.status().message();
    EXPECT_NE(a.status().message().find("AWS_ACCESS_KEY_ID"), std::string::npos);
    EXPECT_NE(a.status().message().find("s3_credentials"), std::string::npos);
    EXPECT_TRUE(Hidden(RedactUrl(url))) << RedactUrl(url);
  }
  EXPECT_EQ(RedactUrl("http://k:s@h:1/b/p?x=1#f"), "http://[HIDDEN]@h:1/b/p?[HIDDEN]#[HIDDEN]");
  EXPECT_EQ(RedactUrl("s3://b/user@example"), "s3://b/user@example");
  // A key with '@' is not userinfo.
  EXPECT_EQ(ParseS3Address("http://h:1/b/user@example")->key, "user@example");
}

TEST(UrlCredentialsTest, FragmentsAndNeedlessEscapesAreRefusedNeededOnesDecoded) {
  EXPECT_FALSE(ParseS3Address("s3://b/p#frag").ok());
  for (const char* needless : {"s3://b/p%41", "s3://b/a%2Fb", "s3://b/a%2e", "s3://b/%7e"}) {
    auto a = ParseS3Address(needless);
    ASSERT_FALSE(a.ok()) << needless;
    EXPECT_NE(a.status().message().find("needs no escaping"), std::string::npos);
  }
  auto a = ParseS3Address("s3://b/a%20b/100%25/q%3F/h%23");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->key, "a b/100%/q?/h#");
  // What Location() writes parses back to the same key.
  EXPECT_EQ(ParseS3Address(a->Location())->key, a->key);
  // A ClickHouse locator's URL is read as ClickHouse reads it: every escape decoded.
  EXPECT_EQ(ParseS3LocatorUrl("http://h:1/b/p%41")->key, "pA");
  EXPECT_EQ(StripUrlCredentials("http://k:s@h:1/b/p?x#y"), "http://h:1/b/p");
  // What a locator's URL gives is an address every reader takes (found by the fuzz target).
  EXPECT_FALSE(ParseS3LocatorUrl("https://s3.examps:le.com/buck/e").ok());
  EXPECT_FALSE(ParseS3LocatorUrl("s3://b:x/k").ok());
  // A lightweight snapshot's source endpoint, kept in data file names, indexes and caches.
  EXPECT_EQ(ObjectBucketUrl(WithSecret("http://AKID:", "@h:1/?sig=x"), "bkt"), "http://h:1/bkt");
}

TEST(UrlCredentialsTest, AnEndpointWithCredentialsIsRefusedNamingWhereItCameFrom) {
  std::map<std::string, std::string> env{{"AWS_ENDPOINT_URL", WithSecret("http://AKID:", "@h:1")},
                                         {"HOME", "/nonexistent"}};
  auto lookup = [&](const char* n) -> const char* {
    auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  auto c = LoadS3Config({}, lookup);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("AWS_ENDPOINT_URL"), std::string::npos);
  EXPECT_TRUE(Hidden(c.status().message())) << c.status().message();
  S3Settings s;
  s.endpoint = WithSecret("http://h:1/?X-Amz-Signature=", "");
  c = LoadS3Config(s, lookup);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("-o s3_endpoint"), std::string::npos);
  EXPECT_TRUE(Hidden(c.status().message()));
}

TEST(LocatorCredentialsTest, StrippedAsNewerClickHouseWritesThem) {
  const std::string three = WithSecret("S3('http://h:1/bk/base', 'AKID', '", "')");
  EXPECT_EQ(StripLocatorCredentials(three), "S3('http://h:1/bk/base')");
  EXPECT_EQ(StripLocatorCredentials(WithSecret("S3('http://AKID:", "@h:1/bk/base?sig=x')")),
            "S3('http://h:1/bk/base')");
  for (const char* kept : {"S3('http://h:1/bk/base')", "File('/b/it\\'s')", "Disk('d', 'b1')"}) {
    EXPECT_EQ(StripLocatorCredentials(kept), kept);
    EXPECT_FALSE(LocatorHasCredentials(kept));
  }
  EXPECT_TRUE(LocatorHasCredentials(three));
  EXPECT_EQ(StripLocatorCredentials(WithSecret("S3(coll, secret_access_key = '", "')")), "S3(...)");
  EXPECT_EQ(StripLocatorCredentials(WithSecret("AzureBlobStorage('AccountKey=", "', 'c')")),
            "AzureBlobStorage(...)");
  EXPECT_EQ(StripLocatorCredentials(WithSecret("S3('http://h/b', 'K', '", "'")), "S3(...)");
  // Both name the same places: only the keyring learns the credentials.
  auto full = FindBaseCandidates(three, "/s/x", {});
  auto stripped = FindBaseCandidates(StripLocatorCredentials(three), "/s/x", {});
  ASSERT_TRUE(full.ok() && stripped.ok());
  ASSERT_EQ(full->candidates.size(), stripped->candidates.size());
  for (size_t i = 0; i < full->candidates.size(); ++i) {
    EXPECT_EQ(full->candidates[i].location, stripped->candidates[i].location);
  }
}

TEST(LocatorCredentialsTest, AnUnparsableLocatorIsDamageShownWithoutItsText) {
  const std::string bad = WithSecret("S3('http://h:1/bk/base', 'AKID', '", "");  // No quote.
  EXPECT_EQ(RedactLocator(bad), "S3(...)");
  auto parsed = ParseLocator(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_TRUE(Hidden(parsed.status().message())) << parsed.status().message();
  auto search = FindBaseCandidates(bad, "/s/x", {});
  EXPECT_EQ(search.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_TRUE(Hidden(search.status().message()));
  auto no_bucket = FindBaseCandidates(WithSecret("S3('http://h:1', 'K', '", "')"), "/s/x", {});
  EXPECT_EQ(no_bucket.status().code(), ErrorCode::kBackupDamaged);
  EXPECT_TRUE(Hidden(no_bucket.status().message())) << no_bucket.status().message();
}

TEST(LocatorCredentialsTest, AUserNeverGivesCredentialsInAUrl) {
  const LocatorContext none;
  auto located = ResolveUserLocation(WithSecret("s3://AKID:", "@bk/p"), none);
  EXPECT_EQ(located.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Hidden(located.status().message()));
  auto locator = ResolveUserLocation(WithSecret("S3('http://AKID:", "@h:1/bk/p')"), none);
  EXPECT_EQ(locator.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(Hidden(locator.status().message())) << locator.status().message();
  EXPECT_EQ(*ResolveUserLocation("s3://bk//p/", none), "s3://bk/p");
  // ClickHouse's own 3-argument form stays accepted.
  EXPECT_TRUE(ResolveUserLocation(WithSecret("S3('http://h:1/bk/p', 'AKID', '", "')"), none).ok());
}

}  // namespace
}  // namespace stitchfs::engine
