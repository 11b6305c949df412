// stitch ls BACKUP [PATH] [-l] [-R] [--json]: the files, symlinks and folders of a folder (or
// all beneath it, with -R), with size and where a file's bytes come from.
#include <algorithm>
#include <cstdio>
#include <map>

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

// One line of a listing: a file (an entry), a symlink or a folder recorded by stitchfs (a
// node), or a folder known only from the names beneath it.
struct Item {
  enum Kind { kFile, kSymlink, kDir } kind;
  std::string name;  // As shown: relative to the folder listed (the whole path with -R).
  size_t index = 0;  // kFile: entry; kSymlink: node.
  bool operator<(const Item& o) const { return name < o.name; }
};

// The folders of `rest` (a name below the folder listed) that lead to it: "a", "a/b" for "a/b/c".
void AddParents(std::string_view rest, bool recursive, std::map<std::string, Item>* dirs) {
  for (size_t slash = rest.find('/'); slash != std::string_view::npos;
       slash = recursive ? rest.find('/', slash + 1) : std::string_view::npos) {
    const std::string d(rest.substr(0, slash));
    dirs->emplace(d, Item{Item::kDir, d});
  }
}

// The items of folder `path` (every item beneath it with `recursive`), sorted by name; the one
// item `path` names if it is a file or a symlink.
engine::StatusOr<std::vector<Item>> Collect(const engine::Manifest& m, std::string path,
                                            bool recursive) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (auto exact = m.FindByName(path); exact && !path.empty()) {
    return std::vector<Item>{{Item::kFile, path, *exact}};
  }
  const std::string prefix = path.empty() ? "" : path + "/";
  std::vector<Item> out;
  std::map<std::string, Item> dirs;
  bool found = path.empty();
  auto add = [&](std::string_view n, Item::Kind kind, size_t i) {
    if (n.substr(0, prefix.size()) != prefix || n.size() == prefix.size()) return;
    found = true;
    const std::string_view rest = n.substr(prefix.size());
    AddParents(rest, recursive, &dirs);
    if (!recursive && rest.find('/') != std::string_view::npos) return;
    if (kind == Item::kDir) {
      dirs.emplace(std::string(rest), Item{kind, std::string(rest)});
    } else {
      out.push_back({kind, std::string(rest), i});
    }
  };
  for (uint32_t i : m.by_name()) add(m.entry(i).name, Item::kFile, i);
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const engine::Node n = m.node(i);
    if (!path.empty() && n.name == path) {
      if (n.type == engine::NodeType::kSymlink) return std::vector<Item>{{Item::kSymlink, path, i}};
      found = true;  // A folder recorded empty.
    }
    add(n.name, n.type == engine::NodeType::kSymlink ? Item::kSymlink : Item::kDir, i);
  }
  if (!found) {
    return engine::Status::EntryNotFound("no entry or folder \"" + path + "\" in the backup");
  }
  for (auto& [name, d] : dirs) out.push_back(std::move(d));
  std::sort(out.begin(), out.end());
  return out;
}

void PrintJson(const engine::Manifest& m, const std::vector<Item>& items) {
  engine::JsonWriter j;
  j.BeginArray();
  for (const Item& it : items) {
    if (it.kind == Item::kDir) {
      j.BeginObject().Key("name").String(it.name).Key("type").String("dir").EndObject();
      continue;
    }
    if (it.kind == Item::kSymlink) {
      j.BeginObject().Key("name").String(it.name).Key("type").String("symlink");
      j.Key("target").String(m.node(it.index).target).EndObject();
      continue;
    }
    const engine::FileEntry e = m.entry(it.index);
    j.BeginObject().Key("name").String(it.name).Key("type").String("file");
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

// One line per item, names escaped (one name per line whatever it holds): folders end in '/',
// with -l a symlink shows "-> TARGET".
void PrintText(const engine::Manifest& m, const std::vector<Item>& items, bool longform) {
  for (const Item& it : items) {
    std::string line = engine::EscapeForMessage(it.name);
    if (it.kind == Item::kDir) line += "/";
    if (it.kind == Item::kSymlink && longform) {
      line += " -> " + engine::EscapeForMessage(m.node(it.index).target);
    }
    if (longform && it.kind == Item::kFile) {
      const engine::FileEntry e = m.entry(it.index);
      std::printf("%-8s %14llu %14llu  ", Provenance(e), static_cast<unsigned long long>(e.size),
                  static_cast<unsigned long long>(e.base_size));
    } else if (longform && it.kind == Item::kSymlink) {
      std::printf("%-8s %14zu %14s  ", "symlink", m.node(it.index).target.size(), "-");
    } else if (longform) {
      std::printf("%-8s %14s %14s  ", "dir", "-", "-");
    }
    std::printf("%s\n", line.c_str());
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
  auto items = Collect(m, path, args.Has("-R"));
  if (!items.ok()) return Fail(items.status().WithPrefix(chain->top().Prefix()));
  if (args.Has("--json")) {
    PrintJson(m, *items);
  } else {
    if (args.Has("-l")) std::printf("%-8s %14s %14s  %s\n", "KIND", "SIZE", "BASE_SIZE", "NAME");
    PrintText(m, *items, args.Has("-l"));
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
