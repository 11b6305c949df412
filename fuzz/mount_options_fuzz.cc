// libFuzzer target for stitchfs's command line (fs/options.h): the input is an argument list,
// one argument per NUL-separated part when it holds a NUL, else per line. What ParseOptions
// accepts goes through FuseMountOptions, and that string is split the way libfuse's option
// parser splits an -o list (a backslash takes the next character literally, a comma ends an
// option): it must give back exactly the options stitchfs meant, each one whole, the backup's
// name as fsname unless the user named one, and never rw.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fs/options.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::fuzz::Printable;
using stitchfs::fuzz::Require;

std::vector<std::string> SplitArgs(std::string_view in) {
  const char sep = in.find('\0') != std::string_view::npos ? '\0' : '\n';
  std::vector<std::string> args;
  size_t start = 0;
  for (;;) {
    const size_t end = in.find(sep, start);
    args.emplace_back(in.substr(start, end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return args;
}

// An -o list as libfuse splits it into options, each still in its escaped form.
std::vector<std::string> SplitFuseOptions(std::string_view list) {
  std::vector<std::string> out(1);
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] == '\\' && i + 1 < list.size()) {
      out.back() += list.substr(i, 2);
      ++i;
    } else if (list[i] == ',') {
      out.emplace_back();
    } else {
      out.back() += list[i];
    }
  }
  return out;
}

// One option's value as libfuse decodes it: "\c" is c, and "\ooo" (first digit 0-3, then two
// octal digits) the byte with that value.
std::string Unescape(std::string_view s) {
  std::string out;
  auto octal = [](char c) { return c >= '0' && c <= '7'; };
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
    } else if (i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && octal(s[i + 2]) &&
               octal(s[i + 3])) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i + 1];
      ++i;
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args = SplitArgs(in);
  std::vector<char*> argv;
  std::string argv0 = "stitchfs";
  argv.push_back(argv0.data());
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  auto parsed = stitchfs::fs::ParseOptions(static_cast<int>(argv.size() - 1), argv.data());
  if (!parsed.ok()) {
    // Bad options are kInvalidArgument; a locator of a form this build does not read (an S3
    // locator with two arguments, a named collection) is kNotSupported, as for stitch.
    const stitchfs::engine::ErrorCode code = parsed.status().code();
    Require(code == stitchfs::engine::ErrorCode::kInvalidArgument ||
                code == stitchfs::engine::ErrorCode::kNotSupported,
            "ParseOptions fails with kInvalidArgument or kNotSupported",
            parsed.status().ToString());
    return 0;
  }
  const stitchfs::fs::Options& o = *parsed;
  if (o.help || o.version) return 0;
  const std::string list = stitchfs::fs::FuseMountOptions(o);
  const std::vector<std::string> got = SplitFuseOptions(list);
  bool user_fsname = false;
  for (const std::string& opt : o.fuse_mount_options) user_fsname |= opt.rfind("fsname=", 0) == 0;
  std::vector<std::string> want = {"ro", "subtype=stitchfs"};
  size_t fsname_at = 0;
  if (!user_fsname) {
    fsname_at = want.size();
    want.push_back("fsname=" + o.backup);
  }
  if (o.allow_other) want.push_back("allow_other");
  if (o.default_permissions) want.push_back("default_permissions");
  for (const std::string& opt : o.fuse_mount_options) want.push_back(opt);

  std::string shown;
  for (const std::string& a : args) shown += "[" + Printable(a) + "] ";
  shown += "-> -o " + Printable(list);
  Require(got.size() == want.size(), "libfuse sees as many options as stitchfs passes", shown);
  for (size_t i = 0; i < got.size(); ++i) {
    const std::string opt = Unescape(got[i]);
    Require(opt == want[i],
            i == fsname_at && !user_fsname ? "libfuse decodes fsname to the backup's name"
                                           : "libfuse decodes each option to what was given",
            shown);
    Require(opt != "rw", "a mount is never rw", shown);
  }
  return 0;
}
