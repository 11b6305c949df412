// stitch backup SOURCE DEST [--base BASE] ...: a full or incremental backup of a folder tree.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/interrupt.h"
#include "engine/base/json_writer.h"
#include "engine/write/snapshot_writer.h"

namespace stitchfs::cli {
namespace {

engine::StatusOr<engine::BackupOptions> OptionsFrom(const Args& args) {
  engine::BackupOptions o;
  o.source = args.positional[0];
  o.dest = args.positional[1];
  o.base = args.Value("--base");
  o.base_locator = args.base_locator;
  ASSIGN_OR_RETURN(o.chain, ChainOptionsFrom(args));
  o.chain.base_override.clear();  // --base names the base itself here.
  if (auto it = args.values.find("--immutable"); it != args.values.end())
    o.immutable_globs = it->second;
  if (std::string c = args.Value("--checksum"); !c.empty()) {
    if (c == "xxh3") {
      o.algorithm = engine::ChecksumAlgorithm::kXxh3;
    } else if (c == "clickhouse") {
      o.algorithm = engine::ChecksumAlgorithm::kClickHouse;
    } else {
      return engine::Status::InvalidArgument("--checksum takes xxh3 or clickhouse, got " + c);
    }
  }
  if (std::string j = args.Value("--jobs"); !j.empty()) {
    o.jobs = std::atoi(j.c_str());
    if (o.jobs < 1 || o.jobs > 256) return engine::Status::InvalidArgument("--jobs takes 1..256");
  }
  o.files_cache = args.Has("--files-cache");
  o.timestamp = args.Value("--timestamp");
  return o;
}

void PrintJson(const engine::BackupSummary& s, const std::string& dest) {
  engine::JsonWriter j;
  j.BeginObject().Key("backup").String(dest).Key("uuid").String(s.uuid);
  j.Key("checksum_algorithm").String(engine::ChecksumAlgorithmName(s.algorithm));
  j.Key("files")
      .Number(s.files)
      .Key("nodes")
      .Number(s.nodes)
      .Key("total_size")
      .Number(s.total_size);
  j.Key("bytes_read").Number(s.bytes_read).Key("bytes_stored").Number(s.bytes_stored);
  j.Key("data_files").Number(s.data_files);
  j.Key("bytes_from_base_whole").Number(s.bytes_from_base_whole);
  j.Key("bytes_from_base_prefix").Number(s.bytes_from_base_prefix);
  j.Key("bytes_deduplicated").Number(s.bytes_deduplicated);
  j.Key("files_unread").Number(s.files_unread);
  j.Key("warnings").BeginArray();
  for (const auto& w : s.warnings) j.String(w);
  j.EndArray().Key("incomplete").Bool(!s.missing.empty()).Key("missing").BeginArray();
  for (const auto& m : s.missing) {
    j.BeginObject().Key("name").String(m.name).Key("reason").String(m.reason).EndObject();
  }
  j.EndArray().EndObject();
  std::printf("%s\n", j.str().c_str());
}

void PrintText(const engine::BackupSummary& s, const std::string& dest) {
  std::fprintf(stderr, "backup %s (uuid %s, %s checksums)\n",
               engine::EscapeForMessage(dest).c_str(), s.uuid.c_str(),
               engine::ChecksumAlgorithmName(s.algorithm));
  std::fprintf(stderr, "  files %llu (+%llu folders/symlinks), %s in total, %s read\n",
               static_cast<unsigned long long>(s.files), static_cast<unsigned long long>(s.nodes),
               HumanBytes(s.total_size).c_str(), HumanBytes(s.bytes_read).c_str());
  std::fprintf(stderr, "  stored %s in %llu data files\n", HumanBytes(s.bytes_stored).c_str(),
               static_cast<unsigned long long>(s.data_files));
  std::fprintf(stderr, "  reused from the base: %s as whole files, %s as prefixes\n",
               HumanBytes(s.bytes_from_base_whole).c_str(),
               HumanBytes(s.bytes_from_base_prefix).c_str());
  std::fprintf(stderr, "  saved by dedup: %s\n", HumanBytes(s.bytes_deduplicated).c_str());
  if (s.files_unread) {
    std::fprintf(stderr, "  trusted unchanged by the files cache: %llu files\n",
                 static_cast<unsigned long long>(s.files_unread));
  }
}

}  // namespace

int CmdBackup(int argc, char** argv) {
  ArgSpec spec{{"--json", "--files-cache"},
               {"--base", "--immutable", "--checksum", "--jobs", "--timestamp"},
               2,
               2,
               2};
  auto args = ParseArgs(argc, argv, 1, spec);
  if (!args.ok()) return Fail(args.status());
  auto options = OptionsFrom(*args);
  if (!options.ok()) return Fail(options.status());
  engine::StopOnSignals();  // Ctrl-C unwinds: the partial backup is removed, uploads aborted.
  Progress bar("backup", 0, 0);
  auto summary =
      engine::WriteBackup(*options, [&](uint64_t f, uint64_t b, uint64_t tf, uint64_t tb) {
        bar.SetTotals(tf, tb);
        bar.Update(f, b);
      });
  bar.Done();
  if (!summary.ok()) return Fail(summary.status());
  for (const auto& w : summary->warnings) {
    std::fprintf(stderr, "stitch: warning: %s\n", engine::EscapeForMessage(w).c_str());
  }
  for (const auto& m : summary->missing) {
    std::fprintf(stderr, "stitch: left out %s: %s\n", engine::EscapeForMessage(m.name).c_str(),
                 engine::EscapeForMessage(m.reason).c_str());
  }
  if (args->Has("--json")) {
    PrintJson(*summary, options->dest);
  } else {
    PrintText(*summary, options->dest);
  }
  if (!summary->missing.empty()) {
    std::fprintf(stderr,
                 "stitch: the backup is complete except for %zu source file(s) that could not be "
                 "read; it is marked incomplete\n",
                 summary->missing.size());
  }
  return summary->missing.empty() ? engine::kExitOk : engine::kExitFailure;
}

}  // namespace stitchfs::cli
