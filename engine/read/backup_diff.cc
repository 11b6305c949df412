#include "engine/read/backup_diff.h"

#include <algorithm>
#include <map>
#include <set>

namespace stitchfs::engine {
namespace {

using Key = std::pair<uint64_t, Checksum>;

// Does the chain of `b` record `key` as a prefix of its entry `idx`?
bool IsPrefix(const ResolvedBackup& b, size_t idx, const Key& key) {
  const std::vector<ContentKey> known = b.Prefixes(idx);
  return std::find(known.begin(), known.end(), key) != known.end();
}

bool Under(std::string_view name, std::string_view prefix) {
  if (prefix.empty()) return true;
  return name == prefix || (name.size() > prefix.size() &&
                            name.substr(0, prefix.size()) == prefix && name[prefix.size()] == '/');
}

bool SameMeta(const FileEntry& a, const FileEntry& b) {
  if (!a.meta || !b.meta) return a.meta.has_value() == b.meta.has_value();
  return a.meta->mode == b.meta->mode && a.meta->uid == b.meta->uid && a.meta->gid == b.meta->gid &&
         a.meta->mtime == b.meta->mtime;
}

}  // namespace

const char* ChangeKindName(ChangeKind k) {
  switch (k) {
    case ChangeKind::kAdded:
      return "added";
    case ChangeKind::kRemoved:
      return "removed";
    case ChangeKind::kAppended:
      return "appended";
    case ChangeKind::kRewritten:
      return "rewritten";
    case ChangeKind::kRenamed:
      return "renamed";
    case ChangeKind::kMetadata:
      return "metadata";
  }
  return "unknown";
}

StatusOr<std::vector<Change>> DiffBackups(const ResolvedBackup& old_chain,
                                          const ResolvedBackup& new_chain,
                                          std::string_view prefix) {
  const Manifest& o = old_chain.top().manifest();
  const Manifest& n = new_chain.top().manifest();
  if (!new_chain.has_prefixes()) {
    return Status::Internal("DiffBackups needs the new backup opened with its prefixes");
  }
  if (o.header().algorithm != n.header().algorithm) {
    return Status::InvalidArgument("the two backups use different checksum algorithms");
  }
  std::vector<Change> out;
  // Old contents that left their name (removed, or replaced by other bytes): an added file with
  // one of them was renamed (a log rotation shows as a rename plus a rewrite).
  std::map<Key, std::string> moved_away;
  std::vector<uint32_t> added;
  for (uint32_t i : o.by_name()) {
    const FileEntry e = o.entry(i);
    if (!Under(e.name, prefix) || n.FindByName(e.name)) continue;
    out.push_back({ChangeKind::kRemoved, std::string(e.name), "", e.size, 0, 0});
    if (e.size > 0) moved_away.emplace(Key{e.size, e.checksum}, std::string(e.name));
  }
  for (uint32_t i : n.by_name()) {
    const FileEntry e = n.entry(i);
    if (!Under(e.name, prefix)) continue;
    auto old_idx = o.FindByName(e.name);
    if (!old_idx) {
      added.push_back(i);
      continue;
    }
    const FileEntry old = o.entry(*old_idx);
    Change c{ChangeKind::kMetadata, std::string(e.name), "", old.size, e.size, 0};
    if (old.size == e.size && old.checksum == e.checksum) {
      if (SameMeta(old, e)) continue;
    } else if (old.size < e.size &&
               (old.size == 0 || IsPrefix(new_chain, i, {old.size, old.checksum}))) {
      c.kind = ChangeKind::kAppended;
      c.appended = e.size - old.size;
    } else {
      c.kind = ChangeKind::kRewritten;
      if (old.size > 0) moved_away.emplace(Key{old.size, old.checksum}, std::string(e.name));
    }
    out.push_back(c);
  }
  std::set<std::string> renamed_from;
  for (uint32_t i : added) {
    const FileEntry e = n.entry(i);
    auto from = e.size > 0 ? moved_away.find({e.size, e.checksum}) : moved_away.end();
    if (from != moved_away.end() && renamed_from.insert(from->second).second) {
      out.push_back({ChangeKind::kRenamed, std::string(e.name), from->second, e.size, e.size, 0});
    } else {
      out.push_back({ChangeKind::kAdded, std::string(e.name), "", 0, e.size, 0});
    }
  }
  // A removed file that was renamed is reported by its rename only.
  std::erase_if(out, [&](const Change& c) {
    return c.kind == ChangeKind::kRemoved && renamed_from.count(c.name);
  });
  std::sort(out.begin(), out.end(),
            [](const Change& a, const Change& b) { return a.name < b.name; });
  return out;
}

}  // namespace stitchfs::engine
