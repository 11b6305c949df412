// stitch ls BACKUP [PATH] [-l] [-R] [--json]: the entries of a folder (or all, with -R), with
// size and where their bytes come from.
#include <cstdio>
#include <set>

#include "cli/commands.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"

namespace stitchfs::cli {
namespace {

// "stored" (whole file here), "dedup" (stored here under another entry's data file), "base"
// (whole file from the base), "stitched" (prefix from the base, suffix here), "empty".
const char* Provenance(const engine::FileEntry& e) {
  if (e.size == 0) return "empty";
  if (e.base_size == 0 && e.data_file != e.name) return "dedup";
  if (e.base_size == 0) return "stored";
  return e.base_size == e.size ? "base" : "stitched";
}

struct Listing {
  std::vector<size_t> files;
  std::set<std::string> dirs;  // Immediate sub-folders (without -R).
};

engine::StatusOr<Listing> Collect(const engine::Manifest& m, std::string path, bool recursive) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  Listing l;
  if (auto exact = m.FindByName(path); exact && !path.empty()) {
    l.files.push_back(*exact);
    return l;
  }
  const std::string prefix = path.empty() ? "" : path + "/";
  for (uint32_t i : m.by_name()) {
    std::string_view n = m.entry(i).name;
    if (n.substr(0, prefix.size()) != prefix) continue;
    std::string_view rest = n.substr(prefix.size());
    size_t slash = rest.find('/');
    if (recursive || slash == std::string_view::npos) {
      l.files.push_back(i);
    } else {
      l.dirs.insert(std::string(rest.substr(0, slash)));
    }
  }
  if (l.files.empty() && l.dirs.empty() && !path.empty()) {
    return engine::Status::EntryNotFound("no entry or folder \"" + path + "\" in the backup");
  }
  return l;
}

void PrintJson(const engine::Manifest& m, const Listing& l) {
  engine::JsonWriter j;
  j.BeginArray();
  for (const std::string& d : l.dirs)
    j.BeginObject().Key("name").String(d).Key("type").String("dir").EndObject();
  for (size_t i : l.files) {
    const engine::FileEntry e = m.entry(i);
    j.BeginObject().Key("name").String(e.name).Key("type").String("file");
    j.Key("size").Number(e.size).Key("provenance").String(Provenance(e));
    j.Key("base_size")
        .Number(e.base_size)
        .Key("stored_bytes")
        .Number(e.has_data_file() ? e.stored_size() : 0);
    j.Key("checksum").String(e.size ? e.checksum.ToHex() : "");
    j.Key("data_file").String(e.has_data_file() ? e.data_file : "").EndObject();
  }
  j.EndArray();
  std::printf("%s\n", j.str().c_str());
}

void PrintText(const engine::Manifest& m, const Listing& l, bool longform,
               const std::string& path) {
  std::string prefix = path;
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (!prefix.empty()) prefix += "/";
  for (const std::string& d : l.dirs) {
    if (longform) std::printf("%-8s %14s %14s  ", "dir", "-", "-");
    std::printf("%s/\n", engine::EscapeForMessage(d).c_str());
  }
  for (size_t i : l.files) {
    const engine::FileEntry e = m.entry(i);
    std::string_view shown = e.name;
    if (shown.substr(0, prefix.size()) == prefix && shown.size() > prefix.size())
      shown.remove_prefix(prefix.size());
    if (longform) {
      std::printf("%-8s %14llu %14llu  ", Provenance(e), static_cast<unsigned long long>(e.size),
                  static_cast<unsigned long long>(e.base_size));
    }
    std::printf("%s\n", engine::EscapeForMessage(shown).c_str());  // One name per line.
  }
}

}  // namespace

int CmdLs(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{"--json", "-l", "-R"}, {}, 1, 2, 1}, &args, &code);
  if (!chain) return code;
  const std::string path = args.positional.size() > 1 ? args.positional[1] : "";
  const engine::Manifest& m = chain->top().manifest();
  auto listing = Collect(m, path, args.Has("-R"));
  if (!listing.ok()) return Fail(listing.status().WithPrefix(chain->top().Prefix()));
  if (args.Has("--json")) {
    PrintJson(m, *listing);
  } else {
    if (args.Has("-l")) std::printf("%-8s %14s %14s  %s\n", "KIND", "SIZE", "BASE_SIZE", "NAME");
    PrintText(m, *listing, args.Has("-l"), path);
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
