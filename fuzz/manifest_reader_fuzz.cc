// libFuzzer target for the `.backup` reader: the input is a manifest document. It is parsed in
// memory (ParseManifest) and through a file descriptor (ReadManifestFd, ReadManifestHeaderFd),
// which must agree; errors must carry one of the documented codes. A manifest that parses is
// walked with every lookup and checked against what the reader promises, then rendered with
// the writer (RenderManifest) and parsed again: the entries, nodes and header must come back.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/format/manifest_reader.h"
#include "engine/format/manifest_writer.h"
#include "fuzz/fuzz_common.h"

namespace {

using stitchfs::engine::ErrorCode;
using stitchfs::engine::FileEntry;
using stitchfs::engine::Manifest;
using stitchfs::engine::ManifestHeader;
using stitchfs::engine::Node;
using stitchfs::engine::Status;
using stitchfs::fuzz::Require;

const std::string kName = "fuzz";

// The codes ReadManifestFd documents (kIOError: out of memory while parsing).
bool DocumentedError(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kBackupDamaged:
    case ErrorCode::kInsecurePath:
    case ErrorCode::kVersionNotSupported:
    case ErrorCode::kNotSupported:
    case ErrorCode::kIOError:
      return true;
    default:
      return false;
  }
}

// True if some text of the manifest is something XML cannot carry (a CR from "&#13;", ...):
// the one reason the writer may refuse a manifest the reader accepted.
bool HasTextXmlCannotCarry(const Manifest& m, const std::vector<FileEntry>& entries,
                           const std::vector<Node>& nodes) {
  const ManifestHeader& h = m.header();
  auto bad = [](std::string_view s) { return !stitchfs::engine::CheckXmlText(s, "").ok(); };
  for (const std::string* s :
       {&h.timestamp, &h.uuid, &h.backup_id, &h.data_file_name_generator, &h.base_backup}) {
    if (bad(*s)) return true;
  }
  for (const FileEntry& e : entries) {
    if (bad(e.name) || bad(e.data_file)) return true;
  }
  for (const Node& n : nodes) {
    if (bad(n.name) || bad(n.target)) return true;
  }
  for (const stitchfs::engine::MissingFile& f : m.missing()) {
    if (bad(f.name) || bad(f.reason)) return true;
  }
  return false;
}

// Renders `m` with the writer and parses the result: the same entries, nodes, missing files and
// header must come back (the writer always writes <deduplicate_files>, and <base_backup_uuid> only
// with a <base_backup>, so those two may be filled in).
void RoundTrip(const Manifest& m) {
  std::vector<FileEntry> entries;
  for (size_t i = 0; i < m.num_entries(); ++i) entries.push_back(m.entry(i));
  std::vector<Node> nodes;
  for (size_t i = 0; i < m.num_nodes(); ++i) nodes.push_back(m.node(i));
  std::string xml;
  const Status rendered = RenderManifest(m.header(), entries, &xml, nodes, m.missing());
  if (!rendered.ok()) {
    Require(
        rendered.code() == ErrorCode::kInvalidArgument && HasTextXmlCannotCarry(m, entries, nodes),
        "the writer refuses only text XML cannot carry", rendered.ToString());
    return;
  }
  auto again = stitchfs::engine::ParseManifest(xml, kName);
  Require(again.ok(), "a rendered manifest parses again",
          again.status().ToString() + "\n" + stitchfs::fuzz::Printable(xml, 4000));
  const std::string diff = stitchfs::fuzz::DiffEntriesAndNodes(m, **again);
  Require(diff.empty(), "a rendered manifest has the same entries, nodes and missing files", diff);
  ManifestHeader expected = m.header();
  if (!expected.deduplicate_files) expected.deduplicate_files = true;
  if (expected.base_backup.empty()) {
    expected.base_backup_uuid.reset();
  } else if (!expected.base_backup_uuid) {
    expected.base_backup_uuid = "";
  }
  const std::string header_diff = stitchfs::fuzz::DiffHeaders(expected, (*again)->header());
  Require(header_diff.empty(), "a rendered manifest has the same header", header_diff);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view xml(reinterpret_cast<const char*>(data), size);
  static stitchfs::fuzz::MemFile file;
  file.Set(xml);

  auto parsed = stitchfs::engine::ParseManifest(xml, kName);
  auto from_fd = stitchfs::engine::ReadManifestFd(file.Rewind(), kName, size);
  auto header = stitchfs::engine::ReadManifestHeaderFd(file.Rewind(), kName);
  Require(parsed.ok() == from_fd.ok(), "ParseManifest and ReadManifestFd agree",
          parsed.status().ToString() + " vs " + from_fd.status().ToString());
  if (!header.ok()) {
    Require(DocumentedError(header.status()), "ReadManifestHeaderFd fails with a documented code",
            header.status().ToString());
    Require(!parsed.ok(), "a manifest whose header fails does not parse");
  }
  if (!parsed.ok()) {
    Require(DocumentedError(parsed.status()), "ParseManifest fails with a documented code",
            parsed.status().ToString());
    Require(parsed.status().code() == from_fd.status().code(),
            "ParseManifest and ReadManifestFd fail alike",
            parsed.status().ToString() + " vs " + from_fd.status().ToString());
    return 0;
  }
  const Manifest& m = **parsed;
  Require(header.ok(), "the header of a manifest that parses reads alone");
  const std::string header_diff = stitchfs::fuzz::DiffHeaders(m.header(), *header);
  Require(header_diff.empty(), "ReadManifestHeaderFd reads the same header", header_diff);
  Require(stitchfs::fuzz::DiffHeaders(m.header(), (*from_fd)->header()).empty() &&
              stitchfs::fuzz::DiffEntriesAndNodes(m, **from_fd).empty(),
          "ParseManifest and ReadManifestFd read the same manifest");

  stitchfs::fuzz::ExerciseManifest(m);
  RoundTrip(m);
  return 0;
}
