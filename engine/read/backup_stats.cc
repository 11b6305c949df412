#include "engine/read/backup_stats.h"

#include <set>
#include <string_view>

#include "engine/format/data_file_name.h"

namespace stitchfs::engine {
namespace {

// "shards/N/" and "shards/N/replicas/M/" of `name` (ClickHouse's ON CLUSTER layout), if it has
// them.
std::pair<std::string_view, std::string_view> HostPrefixes(std::string_view name) {
  if (!name.starts_with("shards/")) return {};
  const size_t shard_end = name.find('/', 7);
  if (shard_end == std::string_view::npos || name.substr(shard_end + 1, 9) != "replicas/") {
    return {};
  }
  const size_t replica_end = name.find('/', shard_end + 10);
  if (replica_end == std::string_view::npos) return {};
  return {name.substr(0, shard_end + 1), name.substr(0, replica_end + 1)};
}

}  // namespace

BackupStats ManifestStats(const Backup& top, size_t depth) {
  BackupStats st;
  st.bytes_by_level.assign(depth, 0);
  const Manifest& m = top.manifest();
  std::set<std::string_view> shards, replicas;
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    ++st.num_files;
    if (auto [shard, replica] = HostPrefixes(e.name); !shard.empty()) {
      shards.insert(shard);
      replicas.insert(replica);
    }
    if (e.has_data_file() && e.data_file.starts_with(kObjectDataPrefix)) ++st.object_files;
    st.total_size += e.size;
    // A stored data object: non-empty, not wholly from the base, holding its own data.
    if (e.has_data_file() && e.data_file == e.name) {
      ++st.num_entries;
      st.size_of_entries += e.stored_size();
    }
  }
  st.uncompressed_size = st.size_of_entries + top.manifest_bytes();
  st.shards = shards.size();
  st.replicas = replicas.size();
  return st;
}

}  // namespace stitchfs::engine
