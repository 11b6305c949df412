// libFuzzer target for base-backup locators (engine/location/locator.h,
// engine/storage/base_candidates.h): the input is the text of a <base_backup>. ParseLocator,
// FindBaseCandidates (with a backups root and a few mapped disks) and RedactLocator run on it:
// every candidate must be absolute and lexically normal (an S3 one: a normal S3 location), at most
// one primary and first, a Disk primary inside its disk's folder, no secret in a candidate or its
// reason, an S3 locator shown with its credentials hidden; errors must carry a documented code (a
// locator that does not parse is the backup's damage) and never show a secret;
// StripLocatorCredentials keeps no secret, is idempotent and names the same candidates; and
// FileLocator of the input must parse back to exactly that path.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/storage/base_candidates.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::engine::ErrorCode;
using stitchfs::fuzz::Printable;
using stitchfs::fuzz::Require;

const std::string kChild = "/srv/store/day2";

// Disk folders as `--disk` and `-o disk=` give them: plain, with a trailing slash, the root.
const std::map<std::string, std::string>& Disks() {
  static const std::map<std::string, std::string> disks = {
      {"backups", "/var/lib/clickhouse/disks/backups"},
      {"d", "/d"},
      {"slash", "/mnt/slash/"},
      {"root", "/"},
  };
  return disks;
}

// True if the lexically normal form of `path` is `dir` or lies below it.
bool Inside(const std::string& path, const std::string& dir) {
  namespace fs = std::filesystem;
  const fs::path rel =
      fs::path(path).lexically_normal().lexically_relative(fs::path(dir).lexically_normal());
  if (rel.empty()) return false;
  for (const fs::path& part : rel) {
    if (part == "..") return false;
  }
  return true;
}

// True if `path` has no ".", ".." or empty component and no trailing slash (but "/").
bool IsNormal(const std::string& path) {
  if (path == "/") return true;
  if (path.empty() || path.back() == '/' || path.find("//") != std::string::npos) return false;
  for (const std::filesystem::path& part : std::filesystem::path(path)) {
    if (part == "." || part == "..") return false;
  }
  return true;
}

bool HasDotDot(const std::string& path) {
  for (const std::filesystem::path& part : std::filesystem::path(path)) {
    if (part == "..") return true;
  }
  return false;
}

// True if `message` is "cannot parse base backup locator <engine_only>: <why> at byte <N>"
// with one of ParseLocator's fixed reasons: nothing of the text but its engine name.
bool ShowsNoText(const std::string& message, const std::string& engine_only) {
  const std::string head = "cannot parse base backup locator " + engine_only + ": ";
  if (message.rfind(head, 0) != 0) return false;
  const size_t at = message.rfind(" at byte ");
  if (at == std::string::npos || at < head.size()) return false;
  const std::string digits = message.substr(at + 9);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return false;
  const std::string why = message.substr(head.size(), at - head.size());
  for (const char* fixed :
       {"no engine name", "no '(' after the engine name", "no ')' at the end", "text after the ')'",
        "unterminated string", "empty argument", "no ',' between arguments"}) {
    if (why == fixed) return true;
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string shown = Printable(text);

  auto loc = stitchfs::engine::ParseLocator(text);
  stitchfs::engine::LocatorContext context;
  context.backups_root = "/var/lib/clickhouse/backups";
  context.disks = Disks();
  auto search = stitchfs::engine::FindBaseCandidates(text, kChild, context);
  const std::string stripped = stitchfs::engine::StripLocatorCredentials(text);
  Require(stitchfs::engine::StripLocatorCredentials(stripped) == stripped,
          "StripLocatorCredentials is idempotent", shown + " -> " + Printable(stripped));
  if (!loc.ok()) {
    Require(loc.status().code() == ErrorCode::kInvalidArgument,
            "ParseLocator fails with kInvalidArgument", loc.status().ToString());
    Require(!search.ok() && search.status().code() == ErrorCode::kBackupDamaged,
            "FindBaseCandidates calls what ParseLocator refuses damage", shown);
    const std::string engine_only = stitchfs::engine::RedactUnparsable(text);
    Require(stitchfs::engine::RedactLocator(text) == engine_only &&
                stripped == (text.empty() ? "" : engine_only),
            "a locator that does not parse is shown and kept as its engine name alone", shown);
    Require(ShowsNoText(search.status().message(), engine_only),
            "a locator that does not parse is not in the message", shown);
  } else {
    Require(!loc->engine.empty(), "a parsed locator names an engine", shown);
  }
  if (!search.ok()) {
    const ErrorCode c = search.status().code();
    Require(c == ErrorCode::kBackupDamaged || c == ErrorCode::kInsecurePath ||
                c == ErrorCode::kNotSupported,
            "FindBaseCandidates fails with a documented code", search.status().ToString());
    return 0;
  }
  const std::string secret = loc->engine == "S3" && loc->args.size() == 3 ? loc->args[2] : "";
  // (Not when the secret is part of the URL as quoted, quotes included: then it is the URL's.)
  const bool check_secret =
      secret.size() >= 8 && loc->args[0].find(secret) == std::string::npos &&
      stitchfs::engine::FileLocator(loc->args[0]).find(secret) == std::string::npos;
  if (check_secret) {
    Require(stripped.find(secret) == std::string::npos, "a stripped locator keeps no secret",
            shown + " -> " + Printable(stripped));
  }
  // The stripped text names the same places (only the keyring learns the credentials).
  auto same = stitchfs::engine::FindBaseCandidates(stripped, kChild, context);
  Require(same.ok() && same->candidates.size() == search->candidates.size(),
          "a stripped locator names the same candidates", shown + " -> " + Printable(stripped));
  for (size_t i = 0; i < search->candidates.size(); ++i) {
    Require(same->candidates[i].location == search->candidates[i].location &&
                same->candidates[i].primary == search->candidates[i].primary,
            "a stripped locator names the same candidates", shown + " -> " + Printable(stripped));
  }
  int primaries = 0;
  for (const auto& c : search->candidates) {
    const std::string& where = c.location;
    primaries += c.primary ? 1 : 0;
    Require(primaries <= 1, "at most one primary candidate", shown);
    // The reason is the stripped locator's (which keeps no secret), so it cannot show the secret
    // even when the secret happens to be words of a fixed reason.
    Require(c.why == same->candidates[&c - search->candidates.data()].why,
            "a candidate's reason does not depend on the credentials", shown);
    if (check_secret) {
      Require(where.find(secret) == std::string::npos, "a secret never is in a candidate", shown);
    }
    if (stitchfs::engine::IsS3Location(where)) {
      auto a = stitchfs::engine::ParseS3Address(where);
      Require(a.ok() && a->Location() == where, "an S3 candidate is a normal S3 location",
              shown + " -> " + Printable(where));
      continue;
    }
    Require(!where.empty() && where.front() == '/' && IsNormal(where),
            "a candidate is an absolute, lexically normal path", shown + " -> " + Printable(where));
    if (c.primary && loc->engine == "Disk") {
      const std::string& disk = Disks().at(loc->args.at(0));
      Require(Inside(where, disk) && !HasDotDot(where), "a Disk locator stays inside its disk",
              shown + " -> " + Printable(where) + " (disk " + disk + ")");
    }
  }
  if (loc->engine == "S3" && !search->candidates.empty()) {
    // Shown as exactly "S3('<location>'" and placeholders: the secret cannot be in it. (The
    // child is local: the URL is the one candidate.)
    const std::string& where = search->candidates[0].location;
    const std::string quoted_where = stitchfs::engine::FileLocator(where).substr(5);  // 'x')
    const std::string expected = "S3(" + quoted_where.substr(0, quoted_where.size() - 1) +
                                 (loc->args.size() == 3 ? ", '[HIDDEN]', '[HIDDEN]')" : ")");
    Require(stitchfs::engine::RedactLocator(text) == expected,
            "an S3 locator is shown by its location, credentials hidden",
            shown + " -> " + Printable(stitchfs::engine::RedactLocator(text)));
  }

  // Any path, quoted by FileLocator, parses back to itself.
  const std::string quoted = stitchfs::engine::FileLocator(text);
  auto back = stitchfs::engine::ParseLocator(quoted);
  Require(back.ok() && back->engine == "File" && back->args.size() == 1 && back->args[0] == text,
          "FileLocator(path) parses back to path", shown + " -> " + Printable(quoted));
  return 0;
}
