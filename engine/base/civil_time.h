// CivilTime: the date-times backups record ("YYYY-MM-DD hh:mm:ss", the writer's local wall
// clock, no zone) as seconds on one proleptic Gregorian line. They are compared and ordered as
// written, so no time zone, DST rule or nanosecond overflow is involved. Every second of the
// years 0000-9999 is representable; what a backup may carry is narrower (kMinBackupTime ..
// kMaxBackupTime) and checked wherever a time enters: manifests, --timestamp, at/ names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/status_or.h"

namespace stitchfs::engine {

// Seconds from 1970-01-01 00:00:00 of the civil calendar (negative before it).
using CivilSeconds = int64_t;

// Days from 1970-01-01 to year-month-day (proleptic Gregorian; month 1-12).
constexpr int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The range of a backup's timestamp: 1970-01-01 00:00:00 to 9999-12-31 23:59:59.
constexpr CivilSeconds kMinBackupTime = 0;
constexpr CivilSeconds kMaxBackupTime = DaysFromCivil(9999, 12, 31) * 86400 + 86399;

// Exactly "YYYY-MM-DD hh:mm:ss" naming a real date and time (seconds 0-59); nullopt otherwise.
std::optional<CivilSeconds> ParseCivil(std::string_view text);

// A backup's timestamp: ParseCivil within [kMinBackupTime, kMaxBackupTime]. On failure, a
// sentence saying what is wrong ("... is not a date-time YYYY-MM-DD hh:mm:ss", "... is before
// 1970-01-01 00:00:00"), for the caller to put in its own error.
StatusOr<CivilSeconds> ParseBackupTime(std::string_view text);

// "YYYY-MM-DD hh:mm:ss" (REQUIRES: t within years 0000-9999).
std::string FormatCivil(CivilSeconds t);

// A point-in-time name as `at/` takes it: "2026", "2026-11", "2026-11-02", "2026-11-02T13",
// "2026-11-02T13:00", "2026-11-02T13:00:05" (a space instead of the T too), years 0000-9999.
// The last second of the period named; nullopt if the text is not such a name.
std::optional<CivilSeconds> PeriodEnd(std::string_view name);

// The local wall clock now.
CivilSeconds NowCivil();

// The instant that local civil time `t` names, in seconds since the epoch (mktime's rules for
// DST and gaps; UTC if the C library cannot convert it).
int64_t CivilToEpochSeconds(CivilSeconds t);

}  // namespace stitchfs::engine
