// stitch info BACKUP [--json]: header, chain and system.backups-style figures.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/location/archive_kind.h"
#include "engine/location/location.h"
#include "engine/location/locator.h"
#include "engine/location/s3_address.h"
#include "engine/read/backup_stats.h"
#include "engine/storage/base_candidates.h"

namespace stitchfs::cli {
namespace {

// Why level `i` (> 0) of `chain` is where it was found (FindBaseCandidates), for `args`.
std::string WhyFound(const engine::ResolvedBackup& chain, size_t i, const Args& args) {
  const auto& child = chain.level(i - 1);
  return engine::WhyBaseFound(child.base_backup, child.path(), chain.level(i).path(), args.locators,
                              i == 1 ? args.Value("--base") : "");
}

// How the backup at `path` is kept: "folder", "s3" or the archive's kind ("zip", "tar.zst").
std::string FormOf(const std::string& path) {
  const engine::Location where = engine::LocationOf(path);
  if (where.in_object_storage()) return "s3";
  return engine::ArchiveKindName(where.archive);
}

// An endpoint URL fit to show: without userinfo or query, control characters escaped.
std::string ShownEndpoint(std::string url) {
  url = url.substr(0, url.find('?'));
  const size_t scheme = url.find("://");
  const size_t at = url.find('@', scheme == std::string::npos ? 0 : scheme);
  if (scheme != std::string::npos && at != std::string::npos && at < url.find('/', scheme + 3)) {
    url.erase(scheme + 3, at + 1 - (scheme + 3));
  }
  return engine::EscapeForMessage(url);
}

// Which of the forms of current ClickHouse the backup uses (FORMAT.md §0, §2.2, §4).
void FormsJson(engine::JsonWriter& j, const engine::ManifestHeader& h,
               const engine::BackupStats& st) {
  j.Key("backup_id").String(h.backup_id);
  j.Key("data_file_name_generator").String(h.data_file_name_generator);
  j.Key("deduplicate_files").Bool(h.deduplicate_files.value_or(true));
  j.Key("copy_s3_credentials_from_backup").Bool(h.copy_s3_credentials);
  j.Key("on_cluster").Bool(st.shards > 0).Key("shards").Number(st.shards);
  j.Key("replicas").Number(st.replicas);
  j.Key("lightweight_snapshot").Bool(!h.original_endpoint.empty());
  j.Key("original_endpoint").String(ShownEndpoint(h.original_endpoint));
  j.Key("original_namespace").String(h.original_namespace);
  j.Key("object_files").Number(st.object_files);
}

void FormsText(const engine::ManifestHeader& h, const engine::BackupStats& st) {
  if (!h.backup_id.empty()) {
    std::printf("backup_id:         %s\n", engine::EscapeForMessage(h.backup_id).c_str());
  }
  if (!h.data_file_name_generator.empty()) {
    std::printf("data files:        named by %s (data_file_name_generator)\n",
                engine::EscapeForMessage(h.data_file_name_generator).c_str());
  }
  if (!h.deduplicate_files.value_or(true)) {
    std::printf("deduplicate_files: 0 (a plain backup: every file stored under its name)\n");
  }
  if (h.copy_s3_credentials) {
    std::printf("base credentials:  this backup's (base_backup_copy_s3_credentials_from_backup)\n");
  }
  if (st.shards > 0) {
    std::printf("on cluster:        %llu shard(s), %llu replica(s) (shards/N/replicas/M/)\n",
                static_cast<unsigned long long>(st.shards),
                static_cast<unsigned long long>(st.replicas));
  }
  if (!h.original_endpoint.empty()) {
    std::printf("lightweight:       %llu file(s) in bucket %s at %s (a lightweight snapshot)\n",
                static_cast<unsigned long long>(st.object_files),
                engine::EscapeForMessage(h.original_namespace).c_str(),
                engine::EscapeForMessage(ShownEndpoint(h.original_endpoint)).c_str());
  }
}

void PrintJson(const engine::ResolvedBackup& chain, const engine::BackupStats& st,
               const Args& args) {
  engine::JsonWriter j;
  j.BeginObject();
  const auto& h = chain.top().header();
  j.Key("path").String(chain.top().path()).Key("form").String(FormOf(chain.top().path()));
  j.Key("uuid").String(h.uuid);
  j.Key("timestamp").String(h.timestamp).Key("version").Number(static_cast<uint64_t>(h.version));
  j.Key("checksum_algorithm").String(engine::ChecksumAlgorithmName(h.algorithm));
  j.Key("base_backup").String(engine::RedactLocator(h.base_backup));
  FormsJson(j, h, st);
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
    if (i > 0) j.Key("found").String(WhyFound(chain, i, args));
    j.Key("bytes_provided").Number(st.bytes_by_level[i]).EndObject();
  }
  j.EndArray().EndObject();
  std::printf("%s\n", j.str().c_str());
}

void PrintText(const engine::ResolvedBackup& chain, const engine::BackupStats& st,
               const Args& args) {
  const auto& h = chain.top().header();
  std::printf("backup:            %s\n", engine::EscapeForMessage(chain.top().path()).c_str());
  const std::string form = FormOf(chain.top().path());
  std::printf("form:              %s\n", form == "folder" || form == "s3"
                                             ? (form == "s3" ? "object storage" : "folder")
                                             : (form + " archive").c_str());
  std::printf("uuid:              %s\n", h.uuid.c_str());
  std::printf("timestamp:         %s\n", h.timestamp.c_str());
  std::printf("version:           %d\n", h.version);
  std::printf("checksums:         %s\n", engine::ChecksumAlgorithmName(h.algorithm));
  std::printf("base_backup:       %s\n",
              h.base_backup.empty()
                  ? "(none)"
                  : engine::EscapeForMessage(engine::RedactLocator(h.base_backup)).c_str());
  FormsText(h, st);
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
      std::printf("  missing %s: %s\n", engine::EscapeForMessage(m.name).c_str(),
                  engine::EscapeForMessage(m.reason).c_str());
    }
  }
  std::printf("chain (%zu backup%s):\n", chain.depth(), chain.depth() == 1 ? "" : "s");
  for (size_t i = 0; i < chain.depth(); ++i) {
    const auto& b = chain.level(i);
    std::printf("  %zu  %s  %s  %s  provides %s\n", i, b.timestamp.c_str(), b.uuid.c_str(),
                engine::EscapeForMessage(b.path()).c_str(),
                HumanBytes(st.bytes_by_level[i]).c_str());
    if (i > 0) {
      std::printf("     found: %s\n", engine::EscapeForMessage(WhyFound(chain, i, args)).c_str());
    }
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
    PrintJson(*chain, st, args);
  } else {
    PrintText(*chain, st, args);
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
