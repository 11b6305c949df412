#include "engine/backends/mem/mem_tree.h"

#include <cerrno>
#include <vector>

namespace stitchfs::engine {
namespace {

// The names of `path` (absolute or relative), in order.
std::vector<std::string_view> Names(std::string_view path) {
  std::vector<std::string_view> out;
  while (!path.empty()) {
    const size_t slash = path.find('/');
    std::string_view name = path.substr(0, slash);
    if (!name.empty()) out.push_back(name);
    path.remove_prefix(slash == std::string_view::npos ? path.size() : slash + 1);
  }
  return out;
}

Status Error(std::string_view op, std::string_view path, int err) {
  return Status::IOError(std::string(op) + " " + std::string(path), err);
}

// True if `inner` is `outer` or lies beneath it.
bool Within(std::string_view inner, std::string_view outer) {
  return inner == outer || (inner.size() > outer.size() && inner.substr(0, outer.size()) == outer &&
                            (outer == "/" || inner[outer.size()] == '/'));
}

}  // namespace

std::string JoinMemPath(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out.push_back('/');
  return out.append(name);
}

MemTree::MemTree() {
  MemNode root;
  root.folder = true;
  live_[kRoot] = root;
  durable_ = live_;
}

uint64_t MemTree::FindBeneath(uint64_t dir, std::string_view rel) const {
  uint64_t ino = dir;
  for (std::string_view name : Names(rel)) {
    auto n = live_.find(ino);
    if (n == live_.end() || !n->second.folder) return 0;
    auto c = n->second.children.find(std::string(name));
    if (c == n->second.children.end()) return 0;
    ino = c->second;
  }
  return live_.count(ino) ? ino : 0;
}

uint64_t MemTree::Find(std::string_view path) const { return FindBeneath(kRoot, path); }

StatusOr<std::pair<uint64_t, std::string>> MemTree::Parent(std::string_view path) const {
  std::vector<std::string_view> names = Names(path);
  if (names.empty()) return Error("no parent of", path, EINVAL);
  const size_t leaf = path.rfind('/');
  const uint64_t dir = leaf == std::string_view::npos ? kRoot : Find(path.substr(0, leaf));
  if (dir == 0) return Error("no folder above", path, ENOENT);
  if (!live_.at(dir).folder) return Error("not a folder above", path, ENOTDIR);
  return std::make_pair(dir, std::string(names.back()));
}

uint64_t MemTree::Add(MemNode n) {
  const uint64_t ino = next_ino_++;
  n.changed = ++clock_;
  live_[ino] = std::move(n);
  return ino;
}

void MemTree::Erase(uint64_t ino) {
  auto it = live_.find(ino);
  if (it == live_.end()) return;
  std::vector<uint64_t> below;
  for (const auto& [name, child] : it->second.children) below.push_back(child);
  live_.erase(it);
  for (uint64_t child : below) Erase(child);
}

StatusOr<uint64_t> MemTree::MakeFolders(std::string_view path, bool* created) {
  uint64_t ino = kRoot;
  bool made = false;
  for (std::string_view name : Names(path)) {
    MemNode& dir = live_.at(ino);
    if (!dir.folder) return Error("mkdir", path, ENOTDIR);
    auto c = dir.children.find(std::string(name));
    if (c != dir.children.end()) {
      ino = c->second;
      made = false;
      continue;
    }
    MemNode folder;
    folder.folder = true;
    const uint64_t child = Add(std::move(folder));
    live_.at(ino).children[std::string(name)] = child;
    ino = child;
    made = true;
  }
  if (!live_.at(ino).folder) return Error("mkdir", path, EEXIST);
  if (created) *created = made;
  return ino;
}

StatusOr<uint64_t> MemTree::CreateFile(std::string_view path, std::string data, bool exclusive) {
  ASSIGN_OR_RETURN(auto parent, Parent(path));
  auto& children = live_.at(parent.first).children;
  auto old = children.find(parent.second);
  if (old != children.end()) {
    if (exclusive) return Error("create", path, EEXIST);
    if (live_.at(old->second).folder) return Error("create", path, EISDIR);
    Erase(old->second);
  }
  MemNode file;
  file.data = std::make_shared<const std::string>(std::move(data));
  const uint64_t ino = Add(std::move(file));
  live_.at(parent.first).children[parent.second] = ino;
  return ino;
}

void MemTree::SetData(uint64_t ino, std::shared_ptr<const std::string> data) {
  live_.at(ino).data = std::move(data);
  Touch(ino);
}

Status MemTree::Rename(std::string_view from, std::string_view to) {
  ASSIGN_OR_RETURN(auto src, Parent(from));
  ASSIGN_OR_RETURN(auto dst, Parent(to));
  auto s = live_.at(src.first).children.find(src.second);
  if (s == live_.at(src.first).children.end()) return Error("rename", from, ENOENT);
  const uint64_t ino = s->second;
  if (from == to) return Status::OK();
  if (live_.at(ino).folder && Within(to, from)) return Error("rename", from, EINVAL);
  auto& into = live_.at(dst.first).children;
  if (auto d = into.find(dst.second); d != into.end()) {
    const MemNode& there = live_.at(d->second);
    if (there.folder != live_.at(ino).folder) {
      return Error("rename onto", to, there.folder ? EISDIR : ENOTDIR);
    }
    if (there.folder && !there.children.empty()) return Error("rename onto", to, ENOTEMPTY);
    Erase(d->second);
  }
  live_.at(src.first).children.erase(src.second);
  live_.at(dst.first).children[dst.second] = ino;
  ++clock_;
  return Status::OK();
}

Status MemTree::Exchange(std::string_view a, std::string_view b) {
  ASSIGN_OR_RETURN(auto pa, Parent(a));
  ASSIGN_OR_RETURN(auto pb, Parent(b));
  if (Within(a, b) || Within(b, a)) return Error("exchange", a, EINVAL);
  auto& ca = live_.at(pa.first).children;
  auto& cb = live_.at(pb.first).children;
  auto ia = ca.find(pa.second), ib = cb.find(pb.second);
  if (ia == ca.end() || ib == cb.end()) return Error("exchange", a, ENOENT);
  std::swap(ia->second, ib->second);
  ++clock_;
  return Status::OK();
}

bool MemTree::RemoveAll(std::string_view path) {
  auto parent = Parent(path);
  if (!parent.ok()) return false;
  auto& children = live_.at(parent->first).children;
  auto it = children.find(parent->second);
  if (it == children.end()) return false;
  Erase(it->second);
  children.erase(it);
  ++clock_;
  return true;
}

Status MemTree::Remove(std::string_view path) {
  const uint64_t ino = Find(path);
  if (ino == 0) return Error("remove", path, ENOENT);
  const MemNode& n = live_.at(ino);
  if (n.folder && !n.children.empty()) return Error("remove", path, ENOTEMPTY);
  RemoveAll(path);
  return Status::OK();
}

void MemTree::Sync(uint64_t ino) {
  auto it = live_.find(ino);
  if (it == live_.end()) return;
  MemNode& kept = durable_[ino];
  kept.folder = it->second.folder;
  kept.changed = it->second.changed;
  if (!kept.folder) {
    kept.data = it->second.data;
    return;
  }
  kept.children = it->second.children;
  for (const auto& [name, child] : kept.children) {
    if (durable_.count(child)) continue;
    MemNode placeholder;  // Its entry is durable, not what it holds.
    placeholder.folder = live_.at(child).folder;
    if (!placeholder.folder) placeholder.data = std::make_shared<const std::string>();
    durable_[child] = std::move(placeholder);
  }
}

void MemTree::LoseUnsynced() {
  Nodes kept;
  std::vector<uint64_t> todo{kRoot};
  while (!todo.empty()) {
    const uint64_t ino = todo.back();
    todo.pop_back();
    auto it = durable_.find(ino);
    if (it == durable_.end() || kept.count(ino)) continue;
    kept[ino] = it->second;
    for (const auto& [name, child] : it->second.children) todo.push_back(child);
  }
  durable_ = kept;
  live_ = std::move(kept);
  ++clock_;
}

uint64_t MemTree::BytesBeneath(uint64_t ino) const {
  auto it = live_.find(ino);
  if (it == live_.end()) return 0;
  if (!it->second.folder) return it->second.data->size();
  uint64_t sum = 0;
  for (const auto& [name, child] : it->second.children) sum += BytesBeneath(child);
  return sum;
}

}  // namespace stitchfs::engine
