#include "engine/read/backup_stats.h"

namespace stitchfs::engine {

BackupStats ManifestStats(const Backup& top, size_t depth) {
  BackupStats st;
  st.bytes_by_level.assign(depth, 0);
  const Manifest& m = top.manifest();
  for (size_t i = 0; i < m.num_entries(); ++i) {
    const FileEntry e = m.entry(i);
    ++st.num_files;
    st.total_size += e.size;
    // A stored data object: non-empty, not wholly from the base, holding its own data.
    if (e.has_data_file() && e.data_file == e.name) {
      ++st.num_entries;
      st.size_of_entries += e.stored_size();
    }
  }
  st.uncompressed_size = st.size_of_entries + top.manifest_bytes();
  return st;
}

}  // namespace stitchfs::engine
