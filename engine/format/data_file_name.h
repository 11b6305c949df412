// The names stitch gives data files in a backup folder. A data file is named after its file
// ("data/db/t/data.bin"), as ClickHouse names them, except where that name could meet a name
// the backup folder itself uses: `.backup`, `.lock`, the writer's staging folder and temporary
// manifest, and stitch's own folder `.stitchfs/`. Every file whose first path component starts
// with a dot is stored under `.stitchfs/data/` instead (its manifest entry names that data file,
// as ClickHouse's <data_file> allows), so no source tree can overwrite the manifest or stage a
// file over a staging name, and `.stitchfs/` beyond `data/` is stitch's alone.
#pragma once

#include <string>
#include <string_view>

namespace stitchfs::engine {

// stitch's own folder inside a backup folder, and where it keeps the resolved index.
inline constexpr std::string_view kStitchDir = ".stitchfs";
inline constexpr std::string_view kIndexFile = ".stitchfs/index";

// The data file name for a file named `name` (a safe relative path): `name` itself, or
// ".stitchfs/data/" + `name` when its first component starts with '.'. One-to-one: the second
// form's first component is ".stitchfs", which the first form never yields.
std::string DataFileNameFor(std::string_view name);

}  // namespace stitchfs::engine
