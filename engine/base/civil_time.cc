#include "engine/base/civil_time.h"

#include <cstdio>
#include <ctime>

namespace stitchfs::engine {
namespace {

constexpr int64_t kDay = 86400;

bool IsLeap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned DaysInMonth(int64_t y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` decimal digits from the front of `s`.
std::optional<unsigned> Digits(std::string_view& s, size_t n) {
  if (s.size() < n) return std::nullopt;
  unsigned v = 0;
  for (size_t i = 0; i < n; ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
  }
  s.remove_prefix(n);
  return v;
}

bool Take(std::string_view& s, char c) {
  if (s.empty() || s.front() != c) return false;
  s.remove_prefix(1);
  return true;
}

// The fields of a (possibly partial) date-time; `parts` says how many were given (1 = year,
// ..., 6 = seconds). `sep` is what may stand between the date and the time.
struct Fields {
  unsigned year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0;
  int parts = 0;
};

std::optional<Fields> ParseFields(std::string_view s, bool allow_t) {
  Fields f;
  unsigned* const slots[] = {&f.year, &f.month, &f.day, &f.hour, &f.minute, &f.second};
  static constexpr size_t kWidth[] = {4, 2, 2, 2, 2, 2};
  static constexpr char kBefore[] = {0, '-', '-', ' ', ':', ':'};
  for (int i = 0; i < 6 && !s.empty(); ++i) {
    if (i > 0) {
      const bool t = i == 3 && allow_t && Take(s, 'T');
      if (!t && !Take(s, kBefore[i])) return std::nullopt;
    }
    auto v = Digits(s, kWidth[i]);
    if (!v) return std::nullopt;
    *slots[i] = *v;
    f.parts = i + 1;
  }
  if (!s.empty() || f.parts == 0) return std::nullopt;
  if (f.month < 1 || f.month > 12 || f.day < 1 || f.day > DaysInMonth(f.year, f.month) ||
      f.hour > 23 || f.minute > 59 || f.second > 59) {
    return std::nullopt;
  }
  return f;
}

// A time split into its fields (the inverse of DaysFromCivil).
struct Broken {
  int64_t year;
  unsigned month, day, hour, minute, second;
};

Broken Split(CivilSeconds t) {
  int64_t days = t >= 0 ? t / kDay : (t - kDay + 1) / kDay;
  const int64_t secs = t - days * kDay;
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(days - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<int64_t>(yoe) + era * 400 + (m <= 2),
          m,
          doy - (153 * mp + 2) / 5 + 1,
          static_cast<unsigned>(secs / 3600),
          static_cast<unsigned>(secs / 60 % 60),
          static_cast<unsigned>(secs % 60)};
}

CivilSeconds ToSeconds(const Fields& f) {
  return DaysFromCivil(f.year, f.month, f.day) * kDay + f.hour * 3600 + f.minute * 60 + f.second;
}

}  // namespace

std::optional<CivilSeconds> ParseCivil(std::string_view text) {
  auto f = ParseFields(text, /*allow_t=*/false);
  if (!f || f->parts != 6) return std::nullopt;
  return ToSeconds(*f);
}

StatusOr<CivilSeconds> ParseBackupTime(std::string_view text) {
  auto t = ParseCivil(text);
  const std::string shown = "\"" + std::string(text.substr(0, 64)) + "\"";
  if (!t) return Status::InvalidArgument(shown + " is not a date-time YYYY-MM-DD hh:mm:ss");
  if (*t < kMinBackupTime) return Status::InvalidArgument(shown + " is before 1970-01-01");
  if (*t > kMaxBackupTime) return Status::InvalidArgument(shown + " is after the year 9999");
  return *t;
}

std::string FormatCivil(CivilSeconds t) {
  const Broken b = Split(t);
  char out[48];
  std::snprintf(out, sizeof(out), "%04lld-%02u-%02u %02u:%02u:%02u", static_cast<long long>(b.year),
                b.month, b.day, b.hour, b.minute, b.second);
  return out;
}

std::optional<CivilSeconds> PeriodEnd(std::string_view name) {
  auto f = ParseFields(name, /*allow_t=*/true);
  if (!f) return std::nullopt;
  Fields next = *f;
  switch (f->parts) {
    case 1:
      return DaysFromCivil(f->year + 1, 1, 1) * kDay - 1;
    case 2:
      next.month = f->month % 12 + 1;
      return DaysFromCivil(f->year + (f->month == 12), next.month, 1) * kDay - 1;
    case 3:
      return ToSeconds(*f) + kDay - 1;
    case 4:
      return ToSeconds(*f) + 3599;
    case 5:
      return ToSeconds(*f) + 59;
    default:
      return ToSeconds(*f);
  }
}

CivilSeconds NowCivil() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&now, &tm);
  return DaysFromCivil(int64_t{tm.tm_year} + 1900, static_cast<unsigned>(tm.tm_mon + 1),
                       static_cast<unsigned>(tm.tm_mday)) *
             kDay +
         tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec;
}

int64_t CivilToEpochSeconds(CivilSeconds t) {
  const Broken b = Split(t);
  std::tm tm{};
  tm.tm_year = static_cast<int>(b.year - 1900);
  tm.tm_mon = static_cast<int>(b.month) - 1;
  tm.tm_mday = static_cast<int>(b.day);
  tm.tm_hour = static_cast<int>(b.hour);
  tm.tm_min = static_cast<int>(b.minute);
  tm.tm_sec = static_cast<int>(b.second);
  tm.tm_isdst = -1;
  const std::time_t e = std::mktime(&tm);
  return e == static_cast<std::time_t>(-1) ? t : static_cast<int64_t>(e);
}

}  // namespace stitchfs::engine
