#include "engine/format/flat_manifest.h"

#include <vector>

#include "engine/format/manifest_writer.h"

namespace stitchfs::engine {

ManifestHeader FlatHeader(const ManifestHeader& h, const std::string& uuid) {
  ManifestHeader out = h;
  out.version = 1;
  out.uuid = uuid;
  out.base_backup.clear();
  out.base_backup_uuid.reset();
  out.copy_s3_credentials = false;
  out.original_endpoint.clear();
  out.original_namespace.clear();
  out.deduplicate_files = true;
  return out;
}

StatusOr<std::string> RenderFlatManifest(const Manifest& m) {
  std::vector<FileEntry> entries;
  entries.reserve(m.num_entries());
  for (uint32_t i : m.by_name()) {
    FileEntry e = m.entry(i);
    e.base_size = 0;
    e.base_checksum = Checksum{};
    e.data_file = e.name;
    entries.push_back(e);
  }
  std::vector<Node> nodes;
  nodes.reserve(m.num_nodes());
  for (size_t i = 0; i < m.num_nodes(); ++i) nodes.push_back(m.node(i));
  std::string xml;
  RETURN_IF_ERROR(RenderManifest(FlatHeader(m.header(), m.header().uuid), entries, &xml, nodes,
                                 m.missing()));  // Incomplete stays incomplete.
  return xml;
}

}  // namespace stitchfs::engine
