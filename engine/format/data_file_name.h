// The names stitch gives data files in a backup folder. A data file is named after its file
// ("data/db/t/data.bin"), as ClickHouse names them, except where that name could meet a name
// the backup folder itself uses: `.backup`, `.lock`, the writer's staging folder and temporary
// manifest, and stitch's own folder `.stitchfs/`. Every file whose first path component starts
// with a dot is stored under `.stitchfs/data/` instead (its manifest entry names that data file,
// as ClickHouse's <data_file> allows), so no source tree can overwrite the manifest or stage a
// file over a staging name, and `.stitchfs/` beyond `data/` is stitch's alone.
#pragma once

#include <optional>
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

// A file of a lightweight snapshot (version 2) lives in the source's object storage, as object
// `key` of the bucket `ns` at `endpoint` (<original_endpoint>, <original_namespace>,
// <object_key>). Its entry names the data file ".stitchfs/object/<hex of the bucket's URL>/<key>",
// a name no writer and no manifest gives (the reader refuses it in a <data_file>), so that the
// object is found through the resolver, its indexes and caches as any data file is.
inline constexpr std::string_view kObjectDataPrefix = ".stitchfs/object/";
// The bucket's URL: `endpoint` without userinfo, query and fragment (StripUrlCredentials: the
// name is kept in indexes and caches, and credentials come from the configuration) and
// trailing slashes, then "/" + `ns` unless `ns` is empty or already the endpoint's first host
// label (a virtual-hosted endpoint).
std::string ObjectBucketUrl(std::string_view endpoint, std::string_view ns);
std::string ObjectDataFileName(std::string_view bucket_url, std::string_view key);
struct ObjectRef {
  std::string bucket_url, key;
};
// The object `data_file` stands for, if it is such a name.
std::optional<ObjectRef> ParseObjectDataFileName(std::string_view data_file);

}  // namespace stitchfs::engine
