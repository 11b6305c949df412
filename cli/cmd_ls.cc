// stitch ls BACKUP [PATH] [-l] [-R] [--json]: the files, symlinks and folders of a folder (or
// all beneath it, with -R), with size and where a file's bytes come from.
#include <algorithm>
#include <cstdio>

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
  // As shown: relative to the folder listed (the whole path with -R). A view into the
  // manifest's names: a folder known from the names beneath it is a prefix of one of them, so
  // a listing costs a few words per line however deep its names (copied strings cost the
  // square of the depth).
  std::string_view name;
  size_t index = 0;  // kFile: entry; kSymlink: node.
  bool operator<(const Item& o) const {
    return name != o.name ? name < o.name : (kind == kDir) > (o.kind == kDir);
  }
};

// Adds the folders of `rest` (a name below the folder listed) that lead to it: "a", "a/b" for
// "a/b/c", those already added for `prev` (the name added before) apart: in name order a
// folder's names come together, so each folder is added about once.
void AddParents(std::string_view rest, std::string_view prev, bool recursive,
                std::vector<Item>* out) {
  size_t same = 0;  // Folders of `rest` that end before `same` are folders of `prev` too.
  while (same < rest.size() && same < prev.size() && rest[same] == prev[same]) ++same;
  for (size_t slash = rest.find('/'); slash != std::string_view::npos;
       slash = recursive ? rest.find('/', slash + 1) : std::string_view::npos) {
    if (slash >= same) out->push_back({Item::kDir, rest.substr(0, slash)});
  }
}

// The items of folder `path` (every item beneath it with `recursive`), sorted by name, each
// once; the one item `path` names if it is a file or a symlink.
engine::StatusOr<std::vector<Item>> Collect(const engine::Manifest& m, std::string path,
                                            bool recursive) {
  while (!path.empty() && path.back() == '/') path.pop_back();
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (auto exact = m.FindByName(path); exact && !path.empty()) {
    return std::vector<Item>{{Item::kFile, m.name(*exact), *exact}};
  }
  const std::string prefix = path.empty() ? "" : path + "/";
  std::vector<Item> out;
  bool found = path.empty();
  std::string_view prev;
  auto add = [&](std::string_view n, Item::Kind kind, size_t i) {
    if (n.substr(0, prefix.size()) != prefix || n.size() == prefix.size()) return;
    found = true;
    const std::string_view rest = n.substr(prefix.size());
    AddParents(rest, prev, recursive, &out);
    prev = rest;
    if (!recursive && rest.find('/') != std::string_view::npos) return;
    out.push_back({kind, rest, i});
  };
  for (uint32_t i : m.by_name()) add(m.name(i), Item::kFile, i);
  prev = {};
  for (size_t i = 0; i < m.num_nodes(); ++i) {
    const engine::Node n = m.node(i);
    if (!path.empty() && n.name == path) {
      if (n.type == engine::NodeType::kSymlink)
        return std::vector<Item>{{Item::kSymlink, n.name, i}};
      found = true;  // A folder recorded empty.
    }
    add(n.name, n.type == engine::NodeType::kSymlink ? Item::kSymlink : Item::kDir, i);
  }
  if (!found) {
    return engine::Status::EntryNotFound("no entry or folder \"" + path + "\" in the backup");
  }
  // Folders first among equal names, and each folder once.
  std::sort(out.begin(), out.end());
  auto same_dir = [](const Item& a, const Item& b) {
    return a.kind == Item::kDir && b.kind == Item::kDir && a.name == b.name;
  };
  out.erase(std::unique(out.begin(), out.end(), same_dir), out.end());
  return out;
}

// The items as one JSON array, written an item at a time (a listing may be larger than memory
// should hold).
void PrintJson(const engine::Manifest& m, const std::vector<Item>& items) {
  engine::JsonWriter j;
  std::fputc('[', stdout);
  for (size_t k = 0; k < items.size(); ++k) {
    const Item& it = items[k];
    j.BeginObject().Key("name").String(it.name);
    if (it.kind == Item::kDir) {
      j.Key("type").String("dir");
    } else if (it.kind == Item::kSymlink) {
      j.Key("type").String("symlink").Key("target").String(m.node(it.index).target);
    } else {
      const engine::FileEntry e = m.entry(it.index);
      j.Key("type").String("file").Key("size").Number(e.size);
      j.Key("provenance").String(Provenance(e)).Key("base_size").Number(e.base_size);
      j.Key("stored_bytes").Number(e.has_data_file() ? e.stored_size() : 0);
      j.Key("checksum").String(e.size ? e.checksum.ToHex() : "");
      j.Key("data_file").String(e.has_data_file() ? e.data_file : "");
    }
    const std::string object = j.EndObject().Take();
    if (k > 0) std::fputc(',', stdout);
    std::fwrite(object.data(), 1, object.size(), stdout);
  }
  std::fputs("]\n", stdout);
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
