// Civil times: parsing, the backup range, at/ periods, formatting, and FileTime's text forms for
// times a count of nanoseconds cannot hold.
#include "engine/base/civil_time.h"

#include <gtest/gtest.h>

#include "engine/base/posix_meta.h"
#include "engine/format/manifest.h"

namespace stitchfs::engine {
namespace {

TEST(CivilTimeTest, ParsesExactlyAndRoundTrips) {
  EXPECT_EQ(ParseCivil("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(ParseCivil("1970-01-02 00:00:01"), 86401);
  for (const char* t : {"2026-12-03 06:33:45", "0000-01-01 00:00:00", "1600-02-29 12:00:00",
                        "9999-12-31 23:59:59", "2024-02-29 23:59:59"}) {
    auto s = ParseCivil(t);
    ASSERT_TRUE(s) << t;
    EXPECT_EQ(FormatCivil(*s), t);
  }
  for (const char* t :
       {"", "t", "2026-12-03", "2026-12-03T06:33:45", "2026-13-01 00:00:00", "2025-02-29 00:00:00",
        "2026-12-03 24:00:00", "2026-12-03 06:60:00", "2026-12-03 06:33:45 ", "+026-12-03 06:33:45",
        "2026-12-3 06:33:45", "2026-12-03 06:33:45.5", "20261-12-03 06:33:45"}) {
    EXPECT_FALSE(ParseCivil(t)) << t;
  }
}

TEST(CivilTimeTest, BackupTimesAreBetween1970And9999) {
  EXPECT_TRUE(ParseBackupTime("1970-01-01 00:00:00").ok());
  EXPECT_TRUE(ParseBackupTime("9999-12-31 23:59:59").ok());
  EXPECT_EQ(ParseBackupTime("1600-01-01 00:00:00").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ParseBackupTime("1969-12-31 23:59:59").status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(ParseBackupTime("1600-01-01 00:00:00").status().message().find("before 1970"),
            std::string::npos);
  EXPECT_EQ(ParseBackupTime("yesterday").status().code(), ErrorCode::kInvalidArgument);
}

TEST(CivilTimeTest, PeriodEndIsTheLastSecondOfThePeriod) {
  auto at = [](const char* t) { return *ParseCivil(t); };
  EXPECT_EQ(PeriodEnd("2026"), at("2026-12-31 23:59:59"));
  EXPECT_EQ(PeriodEnd("2026-02"), at("2026-02-28 23:59:59"));
  EXPECT_EQ(PeriodEnd("2024-02"), at("2024-02-29 23:59:59"));
  EXPECT_EQ(PeriodEnd("2026-12"), at("2026-12-31 23:59:59"));
  EXPECT_EQ(PeriodEnd("2026-11-02"), at("2026-11-02 23:59:59"));
  EXPECT_EQ(PeriodEnd("2026-11-02T13"), at("2026-11-02 13:59:59"));
  EXPECT_EQ(PeriodEnd("2026-11-02 13:00"), at("2026-11-02 13:00:59"));
  EXPECT_EQ(PeriodEnd("2026-11-02T13:00:05"), at("2026-11-02 13:00:05"));
  // Far years order correctly instead of overflowing or wrapping.
  EXPECT_LT(*PeriodEnd("0500"), *PeriodEnd("1600"));
  EXPECT_LT(*PeriodEnd("1600"), at("1970-01-01 00:00:00"));
  EXPECT_GT(*PeriodEnd("2999"), at("2262-05-01 00:00:00"));
  EXPECT_EQ(PeriodEnd("9999"), kMaxBackupTime);
  for (const char* t : {"", "..", "latest", "2026-", "2026-11-02T", "2026-11-02T25", "99999",
                        "2026/11/02", "2026-11-02T13:00:05Z", "-001"}) {
    EXPECT_FALSE(PeriodEnd(t)) << t;
  }
}

TEST(CivilTimeTest, HeaderValuesAreChecked) {
  ManifestHeader h;
  h.uuid = "11111111-2222-4333-8444-555555555555";
  h.timestamp = "2026-10-01 12:00:00";
  ASSERT_TRUE(CheckHeader(&h).ok());
  EXPECT_EQ(h.time, *ParseCivil("2026-10-01 12:00:00"));
  for (const char* u : {"", "u", "11111111-2222-4333-8444-55555555555/", "../../etc",
                        "11111111x2222-4333-8444-555555555555"}) {
    ManifestHeader bad = h;
    bad.uuid = u;
    EXPECT_EQ(CheckHeader(&bad).code(), ErrorCode::kBackupDamaged) << u;
  }
  for (const char* t : {"..", "2026/10/01", "1600-01-01 00:00:00", "2026-10-01 12:00"}) {
    ManifestHeader bad = h;
    bad.timestamp = t;
    EXPECT_EQ(CheckHeader(&bad).code(), ErrorCode::kBackupDamaged) << t;
  }
  ManifestHeader bad_base = h;
  bad_base.base_backup_uuid = "x/y";
  EXPECT_EQ(CheckHeader(&bad_base).code(), ErrorCode::kBackupDamaged);
  ManifestHeader nl = h;
  nl.uuid = "a\nb";
  const std::string text = CheckHeader(&nl).ToString();
  EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  EXPECT_NE(text.find("a\\nb"), std::string::npos) << text;
}

TEST(FileTimeTest, TextFormsKeepEveryTime) {
  for (FileTime t : {FileTime{0, 0}, FileTime{1700000000, 123456789}, FileTime{-1, 999999999},
                     FileTime{-5000000000, 1}, FileTime{10413792000, 5},
                     FileTime{INT64_MAX / 2, 999999999}, FileTime{-(INT64_MAX / 2), 0}}) {
    auto back = FileTime::Parse(t.ToText());
    ASSERT_TRUE(back) << t.ToText();
    EXPECT_EQ(*back, t) << t.ToText();
  }
  EXPECT_EQ((FileTime{1700000000, 5}.ToText()), "1700000000000000005");
  EXPECT_EQ((FileTime{10413792000, 5}.ToText()), "10413792000.000000005");  // Year 2300.
  for (const char* bad : {"", "1.5", "1.-00000001", "x", "1.0000000001", "99999999999999999999"}) {
    EXPECT_FALSE(FileTime::Parse(bad)) << bad;
  }
}

TEST(FileTimeTest, MetaWithLinkCountRoundTrips) {
  PosixMeta m{0644, 1, 2, 3, {10413792000, 7}, {-1, 0}, 99, 100};
  auto back = PosixMeta::Parse(m.ToText());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, m);
  m.nlink = 0;  // Older manifests: seven fields.
  EXPECT_EQ(*PosixMeta::Parse(m.ToText()), m);
  EXPECT_FALSE(PosixMeta::Parse(m.ToText() + " 0"));
  EXPECT_FALSE(PosixMeta::Parse(m.ToText() + " 2 3"));
}

}  // namespace
}  // namespace stitchfs::engine
