#include "engine/format/data_file_name.h"

namespace stitchfs::engine {

std::string DataFileNameFor(std::string_view name) {
  if (name.empty() || name[0] != '.') return std::string(name);
  return std::string(kStitchDir) + "/data/" + std::string(name);
}

}  // namespace stitchfs::engine
