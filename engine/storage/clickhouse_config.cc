#include "engine/storage/clickhouse_config.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/base/xml_tree.h"
#include "engine/storage/backup_folder.h"

namespace fs = std::filesystem;

namespace stitchfs::engine {
namespace {

bool IsMergeAttribute(const std::string& key) {
  return key == "replace" || key == "remove" || key == "incl" || key == "from_zk" ||
         key == "from_env";
}

// What matches an element with another while merging: its name and its other attributes.
std::string MergeKey(const XmlElement& e) {
  std::vector<std::pair<std::string, std::string>> attrs;
  for (const auto& a : e.attributes) {
    if (!IsMergeAttribute(a.first)) attrs.push_back(a);
  }
  std::sort(attrs.begin(), attrs.end());
  std::string key = e.name;
  for (const auto& [k, v] : attrs) key += '\0' + k + '=' + v;
  return key;
}

bool HasFlag(const XmlElement& e, std::string_view key) { return e.Attribute(key) != nullptr; }

bool IsBlank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// Merges `with` into `into`, as ClickHouse's configuration processor does.
Status Merge(XmlElement& into, XmlElement& with) {
  if (!IsBlank(with.text)) into.text = with.text;
  for (const auto& a : with.attributes) {
    if (IsMergeAttribute(a.first)) continue;
    auto same = std::find_if(into.attributes.begin(), into.attributes.end(),
                             [&](const auto& b) { return b.first == a.first; });
    if (same == into.attributes.end()) {
      into.attributes.push_back(a);
    } else {
      same->second = a.second;
    }
  }
  // Each merged element is matched against the elements `into` had before the merge (the
  // first one with its key not matched yet), never against what the merge appends.
  const size_t original = into.children.size();
  std::vector<bool> matched(original, false), removed(original, false);
  std::vector<std::unique_ptr<XmlElement>> appended;
  for (auto& child : with.children) {
    if (HasFlag(*child, "replace") && HasFlag(*child, "remove")) {
      return Status::InvalidArgument("element <" + child->name + "> has both replace and remove");
    }
    const std::string key = MergeKey(*child);
    size_t i = 0;
    while (i < original && (matched[i] || MergeKey(*into.children[i]) != key)) ++i;
    if (i == original) {
      if (!HasFlag(*child, "remove")) appended.push_back(std::move(child));
      continue;
    }
    matched[i] = true;
    if (HasFlag(*child, "remove")) {
      removed[i] = true;
    } else if (HasFlag(*child, "replace")) {
      into.children[i] = std::move(child);
    } else {
      RETURN_IF_ERROR(Merge(*into.children[i], *child));
    }
  }
  std::vector<std::unique_ptr<XmlElement>> kept;
  for (size_t i = 0; i < original; ++i) {
    if (!removed[i]) kept.push_back(std::move(into.children[i]));
  }
  for (auto& a : appended) kept.push_back(std::move(a));
  into.children = std::move(kept);
  return Status::OK();
}

StatusOr<std::unique_ptr<XmlElement>> ReadXmlFile(const std::string& file) {
  std::error_code ec;
  if (const auto size = fs::file_size(file, ec); !ec && size > kMaxXmlTreeBytes) {
    return Status::InvalidArgument("ClickHouse configuration " + file + " is larger than 64 MiB");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read ClickHouse configuration " + file);
  std::ostringstream text;
  text << in.rdbuf();
  auto tree = ParseXmlTree(text.str());
  if (!tree.ok()) return tree.status().WithPrefix("ClickHouse configuration " + file + ": ");
  return tree;
}

// The files ClickHouse merges into `file`, in the order it merges them.
std::vector<std::string> MergeFiles(const std::string& file, std::vector<std::string>* warnings) {
  const fs::path p(file);
  std::vector<std::string> out;
  for (const fs::path& dir :
       {p.parent_path() / (p.stem().string() + ".d"), p.parent_path() / "conf.d"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      const std::string ext = entry.path().extension().string();
      if (name.empty() || name.front() == '.' || !entry.is_regular_file(ec)) continue;
      if (ext == ".xml" || ext == ".conf") out.push_back(entry.path().string());
      if (ext == ".yaml" || ext == ".yml") {
        warnings->push_back(entry.path().string() +
                            " is YAML, which is not read: give --backups-root or --disk if it "
                            "sets backups.allowed_path or disks");
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The text of `e`, or the environment variable its `from_env` names.
std::string ValueOf(const XmlElement& e) {
  if (const std::string* var = e.Attribute("from_env")) {
    const char* v = std::getenv(var->c_str());
    return v ? v : "";
  }
  return e.Trimmed();
}

std::string Under(const std::string& base, const std::string& p) {
  return AbsolutePath(!p.empty() && p.front() == '/' ? p : base + "/" + p);
}

void ReadDisks(const XmlElement& root, const std::string& data, LocatorContext* c,
               std::vector<std::string>* warnings) {
  c->disks["default"] = data;
  const XmlElement* sc = root.Child("storage_configuration");
  const XmlElement* disks = sc ? sc->Child("disks") : nullptr;
  if (!disks) return;
  for (const auto& d : disks->children) {
    const XmlElement* type = d->Child("type");
    const std::string t = type ? ValueOf(*type) : "local";
    const XmlElement* path = d->Child("path");
    if (d->name == "default") continue;  // Always the server's data folder.
    if (t != "local" || !path || ValueOf(*path).empty()) {
      warnings->push_back("disk '" + d->name + "' (" + t + ") is not a local folder: not mapped");
      continue;
    }
    c->disks[d->name] = Under(data, ValueOf(*path));
  }
}

}  // namespace

StatusOr<LocatorContext> ReadClickHouseConfig(const std::string& file,
                                              std::vector<std::string>* warnings) {
  ASSIGN_OR_RETURN(std::unique_ptr<XmlElement> root, ReadXmlFile(file));
  for (const std::string& more : MergeFiles(file, warnings)) {
    ASSIGN_OR_RETURN(std::unique_ptr<XmlElement> with, ReadXmlFile(more));
    RETURN_IF_ERROR(Merge(*root, *with).WithPrefix("ClickHouse configuration " + more + ": "));
  }
  LocatorContext c;
  c.origin = "from " + file;
  const XmlElement* path = root->Child("path");
  const std::string data =
      AbsolutePath(path && !ValueOf(*path).empty() ? ValueOf(*path) : "/var/lib/clickhouse/");
  if (const XmlElement* backups = root->Child("backups")) {
    if (const XmlElement* allowed = backups->Child("allowed_path")) {
      if (!ValueOf(*allowed).empty()) c.backups_root = Under(data, ValueOf(*allowed));
    }
  }
  ReadDisks(*root, data, &c, warnings);
  return c;
}

StatusOr<LocatorContext> MakeLocatorContext(const std::string& config_file,
                                            const std::string& backups_root,
                                            const std::map<std::string, std::string>& disks,
                                            std::vector<std::string>* warnings) {
  LocatorContext c;
  if (!config_file.empty()) {
    ASSIGN_OR_RETURN(c, ReadClickHouseConfig(AbsolutePath(config_file), warnings));
  }
  if (!backups_root.empty()) {
    c.backups_root = AbsolutePath(backups_root);
    c.origin = "--backups-root";
  }
  for (const auto& [name, dir] : disks) c.disks[name] = AbsolutePath(dir);
  return c;
}

}  // namespace stitchfs::engine
