// libFuzzer target for base-backup locators (engine/storage/locator.h): the input is the text of a
// <base_backup>. ParseLocator and ResolveLocator run on it with a few mapped disks; what
// resolves must be absolute and lexically normal (an S3 locator: a normal S3 location, shown
// with its credentials hidden), a Disk path must stay inside its disk's folder, errors must
// carry a documented code, and FileLocator of the input must parse back to
// exactly that path.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "engine/s3/s3_address.h"
#include "engine/storage/locator.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::engine::ErrorCode;
using stitchfs::fuzz::Printable;
using stitchfs::fuzz::Require;

const std::string kHolder = "/srv/store";

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string shown = Printable(text);

  auto loc = stitchfs::engine::ParseLocator(text);
  auto resolved = stitchfs::engine::ResolveLocator(text, kHolder, Disks());
  if (!loc.ok()) {
    Require(loc.status().code() == ErrorCode::kInvalidArgument,
            "ParseLocator fails with kInvalidArgument", loc.status().ToString());
    Require(!resolved.ok() && resolved.status().code() == ErrorCode::kInvalidArgument,
            "ResolveLocator refuses what ParseLocator refuses", shown);
  } else {
    Require(!loc->engine.empty(), "a parsed locator names an engine", shown);
  }
  if (resolved.ok() && loc->engine == "S3") {
    // An S3 location: in its one spelling, with no credentials in it or in the shown form.
    const std::string& where = *resolved;
    auto a = stitchfs::engine::ParseS3Address(where);
    Require(stitchfs::engine::IsS3Location(where) && a.ok() && a->Location() == where,
            "an S3 locator resolves to a normal S3 location", shown + " -> " + Printable(where));
    // Shown as exactly "S3('<location>'" and placeholders: the secret cannot be in it.
    const std::string quoted_where = stitchfs::engine::FileLocator(where).substr(5);  // 'x')
    const std::string expected = "S3(" + quoted_where.substr(0, quoted_where.size() - 1) +
                                 (loc->args.size() == 3 ? ", '[HIDDEN]', '[HIDDEN]')" : ")");
    Require(stitchfs::engine::RedactLocator(text) == expected,
            "an S3 locator is shown by its location, credentials hidden",
            shown + " -> " + Printable(stitchfs::engine::RedactLocator(text)));
    if (loc->args.size() == 3 && loc->args[2].size() >= 8 &&
        loc->args[0].find(loc->args[2]) == std::string::npos) {
      Require(where.find(loc->args[2]) == std::string::npos, "a secret never is in a location",
              shown);
    }
  } else if (resolved.ok()) {
    const std::string& path = *resolved;
    Require(!path.empty() && path.front() == '/', "a resolved locator is an absolute path",
            shown + " -> " + Printable(path));
    if (loc->engine == "Disk") {
      const std::string& disk = Disks().at(loc->args.at(0));
      Require(Inside(path, disk) && !HasDotDot(path), "a Disk locator stays inside its disk",
              shown + " -> " + Printable(path) + " (disk " + disk + ")");
    } else {
      Require(loc->engine == "File", "only File, Disk and S3 locators resolve", shown);
    }
    Require(IsNormal(path), "a resolved locator is lexically normal",
            shown + " -> " + Printable(path));
  } else {
    const ErrorCode c = resolved.status().code();
    Require(c == ErrorCode::kInvalidArgument || c == ErrorCode::kNoBaseBackup ||
                c == ErrorCode::kInsecurePath || c == ErrorCode::kNotSupported,
            "ResolveLocator fails with a documented code", resolved.status().ToString());
  }

  // Any path, quoted by FileLocator, parses back to itself.
  const std::string quoted = stitchfs::engine::FileLocator(text);
  auto back = stitchfs::engine::ParseLocator(quoted);
  Require(back.ok() && back->engine == "File" && back->args.size() == 1 && back->args[0] == text,
          "FileLocator(path) parses back to path", shown + " -> " + Printable(quoted));
  return 0;
}
