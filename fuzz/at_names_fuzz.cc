// libFuzzer target for the time parsing of engine/base/civil_time.h: the at/ names of a store mount
// (PeriodEnd), --timestamp and manifest timestamps (ParseCivil, ParseBackupTime). Whatever the
// input: no crash or overflow; a time that parses formats back to the same text; a period's end
// lies in the years 0000-9999 and is never earlier than the end of a more precise name inside
// it; a full date-time names the second it says; a backup time is within its documented range.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/base/civil_time.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::engine::CivilSeconds;
using stitchfs::fuzz::Printable;
using stitchfs::fuzz::Require;
namespace eng = stitchfs::engine;

constexpr CivilSeconds kFirstSecond = eng::DaysFromCivil(0, 1, 1) * 86400;

void CheckPeriod(std::string_view name) {
  const auto end = eng::PeriodEnd(name);
  if (!end) return;
  Require(*end >= kFirstSecond && *end <= eng::kMaxBackupTime, "a period ends in 0000-9999",
          Printable(name));
  Require(eng::ParseCivil(eng::FormatCivil(*end)) == end, "a period's end formats and parses back",
          Printable(name));
  // Shorter prefixes at the separators name wider periods that end no earlier.
  for (size_t cut : {4, 7, 10, 13, 16}) {
    if (cut >= name.size()) break;
    const auto wider = eng::PeriodEnd(name.substr(0, cut));
    Require(wider.has_value(), "a prefix of an at/ name is one", Printable(name.substr(0, cut)));
    Require(*wider >= *end, "a wider period ends no earlier", Printable(name));
  }
}

void CheckTimestamp(std::string_view text) {
  const auto t = eng::ParseCivil(text);
  if (t) {
    Require(eng::FormatCivil(*t) == text, "a date-time formats back to its text", Printable(text));
    Require(eng::PeriodEnd(text) == t, "a full date-time names its own second", Printable(text));
  }
  const auto backup = eng::ParseBackupTime(text);
  if (backup.ok()) {
    Require(t == *backup, "a backup time is a date-time", Printable(text));
    Require(*backup >= eng::kMinBackupTime && *backup <= eng::kMaxBackupTime,
            "a backup time is within 1970-9999", Printable(text));
  } else {
    Require(backup.status().code() == eng::ErrorCode::kInvalidArgument,
            "a refused backup time is BAD_ARGUMENTS", Printable(text));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckPeriod(text);
  CheckTimestamp(text);
  return 0;
}
