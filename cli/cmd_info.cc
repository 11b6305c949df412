// stitch info BACKUP [--json]: header, chain and system.backups-style figures.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/archive/archive_kind.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/read/backup_stats.h"
#include "engine/s3/s3_address.h"
#include "engine/storage/locator.h"

namespace stitchfs::cli {
namespace {

// How the backup at `path` is kept: "folder", "s3" or the archive's kind ("zip", "tar.zst").
std::string FormOf(const std::string& path) {
  if (engine::IsS3Location(path)) return "s3";
  return engine::ArchiveKindName(engine::ArchiveKindOf(path));
}

void PrintJson(const engine::ResolvedBackup& chain, const engine::BackupStats& st) {
  engine::JsonWriter j;
  j.BeginObject();
  const auto& h = chain.top().header();
  j.Key("path").String(chain.top().path()).Key("form").String(FormOf(chain.top().path()));
  j.Key("uuid").String(h.uuid);
  j.Key("timestamp").String(h.timestamp).Key("version").Number(static_cast<uint64_t>(h.version));
  j.Key("checksum_algorithm").String(engine::ChecksumAlgorithmName(h.algorithm));
  j.Key("base_backup").String(engine::RedactLocator(h.base_backup));
  j.Key("num_files").Number(st.num_files).Key("total_size").Number(st.total_size);
  j.Key("num_entries").Number(st.num_entries).Key("size_of_entries").Number(st.size_of_entries);
  j.Key("uncompressed_size").Number(st.uncompressed_size);
  const auto& missing = chain.top().manifest().missing();
  j.Key("incomplete").Bool(!missing.empty()).Key("missing").BeginArray();
  for (const auto& m : missing) {
    j.BeginObject().Key("name").String(m.name).Key("reason").String(m.reason).EndObject();
  }
  j.EndArray();
  j.Key("chain").BeginArray();
  for (size_t i = 0; i < chain.depth(); ++i) {
    const auto& b = chain.level(i);
    j.BeginObject().Key("level").Number(i).Key("path").String(b.path());
    j.Key("uuid").String(b.uuid).Key("timestamp").String(b.timestamp);
    j.Key("bytes_provided").Number(st.bytes_by_level[i]).EndObject();
  }
  j.EndArray().EndObject();
  std::printf("%s\n", j.str().c_str());
}

void PrintText(const engine::ResolvedBackup& chain, const engine::BackupStats& st) {
  const auto& h = chain.top().header();
  std::printf("backup:            %s\n", chain.top().path().c_str());
  const std::string form = FormOf(chain.top().path());
  std::printf("form:              %s\n", form == "folder" || form == "s3"
                                             ? (form == "s3" ? "object storage" : "folder")
                                             : (form + " archive").c_str());
  std::printf("uuid:              %s\n", h.uuid.c_str());
  std::printf("timestamp:         %s\n", h.timestamp.c_str());
  std::printf("version:           %d\n", h.version);
  std::printf("checksums:         %s\n", engine::ChecksumAlgorithmName(h.algorithm));
  std::printf("base_backup:       %s\n",
              h.base_backup.empty() ? "(none)" : engine::RedactLocator(h.base_backup).c_str());
  std::printf("num_files:         %llu\n", static_cast<unsigned long long>(st.num_files));
  std::printf("total_size:        %llu (%s)\n", static_cast<unsigned long long>(st.total_size),
              HumanBytes(st.total_size).c_str());
  std::printf("num_entries:       %llu\n", static_cast<unsigned long long>(st.num_entries));
  std::printf("size_of_entries:   %llu (%s)\n", static_cast<unsigned long long>(st.size_of_entries),
              HumanBytes(st.size_of_entries).c_str());
  std::printf("uncompressed_size: %llu\n", static_cast<unsigned long long>(st.uncompressed_size));
  const auto& missing = chain.top().manifest().missing();
  if (!missing.empty()) {
    std::printf("incomplete:        %zu source file(s) could not be backed up:\n", missing.size());
    for (const auto& m : missing) {
      std::printf("  missing %s: %s\n", m.name.c_str(), engine::EscapeForMessage(m.reason).c_str());
    }
  }
  std::printf("chain (%zu backup%s):\n", chain.depth(), chain.depth() == 1 ? "" : "s");
  for (size_t i = 0; i < chain.depth(); ++i) {
    const auto& b = chain.level(i);
    std::printf("  %zu  %s  %s  %s  provides %s\n", i, b.timestamp.c_str(), b.uuid.c_str(),
                b.path().c_str(), HumanBytes(st.bytes_by_level[i]).c_str());
  }
}

}  // namespace

int CmdInfo(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{"--json"}, {}, 1, 1, 1}, &args, &code);
  if (!chain) return code;
  const engine::BackupStats st = chain->Stats();
  if (args.Has("--json")) {
    PrintJson(*chain, st);
  } else {
    PrintText(*chain, st);
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
