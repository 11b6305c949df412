// ManifestWriter: renders a manifest as ClickHouse writes it (G2: one line, no declaration,
// tags in ClickHouse's order), XML-escaped, refusing text that XML cannot carry.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/format/manifest.h"

namespace stitchfs::engine {

// OK if `s` survives an XML round trip as element text: valid UTF-8 without C0 controls other
// than tab and LF, without CR (parsers turn it into LF), U+FFFE or U+FFFF.
// kInvalidArgument naming `what` otherwise.
Status CheckXmlText(std::string_view s, std::string_view what);

// `s` as text XML can carry and a terminal shows on one line: bytes XML cannot carry, and
// control characters, as \xNN (\t, \n, \r for those three).
std::string MakePrintable(std::string_view s);

// Appends the escaped manifest of `header` and `entries` (written in the order given; ClickHouse
// sorts them by name) to `out`. Writes <stitchfs_checksum> only for non-ClickHouse algorithms.
// Errors: kInvalidArgument for text XML cannot carry or an entry whose fields contradict each
// other (base_size > size, a data_file for an entry without data); kInsecurePath for unsafe names.
// `nodes` (directories, symlinks) and `missing` (what an incomplete backup lacks; their number
// goes in the header as <stitchfs_incomplete>) follow </contents>, where ClickHouse's reader
// ignores them.
Status RenderManifest(const ManifestHeader& header, std::span<const FileEntry> entries,
                      std::string* out, std::span<const Node> nodes = {},
                      std::span<const MissingFile> missing = {});

// The text of a <stitchfs_missing> leaf: "<name length> <name><reason>". And its parser.
std::string MissingToText(const MissingFile& f);
std::optional<MissingFile> MissingFromText(std::string_view text);

}  // namespace stitchfs::engine
