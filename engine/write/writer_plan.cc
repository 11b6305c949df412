#include "engine/write/writer_plan.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>

#include "engine/base/posix_file.h"
#include "engine/format/data_file_name.h"
#include "engine/format/hard_links.h"
#include "engine/format/manifest_writer.h"

namespace stitchfs::engine {
namespace {

// Removes staged data file `i` if there is one (a failed read may have left part of one; a
// failure to remove it is the destination's).
std::string_view DataName(const FileEntry& e) { return e.data_file.empty() ? e.name : e.data_file; }

Status DropTemp(const PlanInput& in, size_t i) { return in.writer.DropStaged(std::to_string(i)); }

// The entry for a result read without error (no content decisions yet).
FileEntry EntryOf(const std::string& name, const FileResult& r) {
  FileEntry e;
  e.name = name;
  e.size = r.size;
  e.meta = r.meta;
  e.checksum = r.size > 0 ? r.pass.checksum : Checksum{};
  return e;
}

}  // namespace

void SplitChangedLinks(const SourceTree& tree, std::vector<FileResult>& results,
                       std::vector<std::string>* warnings) {
  std::map<std::pair<uint64_t, uint64_t>, std::vector<size_t>> groups;
  for (size_t i = 0; i < results.size(); ++i) {
    const FileResult& r = results[i];
    if (r.status.ok() && r.meta.nlink > 1) groups[{r.meta.dev, r.meta.ino}].push_back(i);
  }
  for (const auto& [key, members] : groups) {
    const FileEntry first = EntryOf(tree.files[members[0]].name, results[members[0]]);
    bool same = true;
    for (size_t k = 1; k < members.size() && same; ++k) {
      same = SameLinkedFile(first, EntryOf(tree.files[members[k]].name, results[members[k]]));
    }
    if (same) continue;
    for (size_t i : members) results[i].meta.nlink = 1;
    warnings->push_back("hard links of " + MakePrintable(tree.files[members[0]].name) +
                        " changed between the reads of their names; stored as separate files");
  }
}

StatusOr<std::vector<FileEntry>> FinishEntries(const PlanInput& in, BackupSummary* s) {
  std::vector<FileEntry> out;
  std::map<std::pair<uint64_t, Checksum>, size_t> reps;  // key -> index in `out`
  for (size_t i = 0; i < in.tree.files.size(); ++i) {
    const FileResult& r = in.results[i];
    const std::string& name = in.tree.files[i].name;
    if (!r.status.ok()) {
      if (r.fault == PassFault::kDestination || r.status.code() == ErrorCode::kExpectedEndOfFile) {
        return r.status;
      }
      RETURN_IF_ERROR(DropTemp(in, i));
      s->missing.push_back({MakePrintable(name), ReasonOf(r.status)});
      continue;
    }
    FileEntry e = EntryOf(name, r);
    ++s->files;
    s->total_size += e.size;
    s->bytes_read += r.pass.bytes_read;
    s->files_unread += r.unread ? 1 : 0;
    if (e.size == 0) {
      out.push_back(e);
      continue;
    }
    const bool in_base = r.pass.base_size == e.size ||
                         (in.base != nullptr && in.base->FindByContent(e.size, e.checksum));
    if (in_base) {  // Unchanged, or renamed: the whole file comes from the base.
      RETURN_IF_ERROR(DropTemp(in, i));
      e.base_size = e.size;
      e.base_checksum = e.checksum;
      s->bytes_from_base_whole += e.size;
    } else if (auto rep = reps.find({e.size, e.checksum}); rep != reps.end()) {
      RETURN_IF_ERROR(DropTemp(in, i));
      const FileEntry& first = out[rep->second];
      e.base_size = first.base_size;
      e.base_checksum = first.base_checksum;
      e.data_file = first.data_file.empty() ? first.name : first.data_file;
      s->bytes_deduplicated += e.size - e.base_size;
    } else {
      e.base_size = r.pass.base_size;
      e.base_checksum = r.pass.base_checksum;
      if (!r.pass.stored) return Status::Internal("no data written for " + name);
      std::string data_name = DataFileNameFor(name);
      if (data_name != name) e.data_file = in.data_names.emplace_back(std::move(data_name));
      RETURN_IF_ERROR(in.writer.Publish(std::to_string(i), std::string(DataName(e))));
      s->bytes_from_base_prefix += e.base_size;
      s->bytes_stored += e.size - e.base_size;
      ++s->data_files;
      reps.emplace(std::make_pair(e.size, e.checksum), out.size());
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace stitchfs::engine
