// stitch log STORE [--json]: the backups of a store, oldest first, as a table.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/format/manifest_cache.h"
#include "engine/storage/store.h"

namespace stitchfs::cli {

int CmdLog(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 1, {{"--json"}, {}, 1, 1, 1});
  if (!args.ok()) return Fail(args.status());
  auto list = engine::ListStore(ContextFrom(*args), args->positional[0]);
  if (!list.ok()) return Fail(list.status());
  int code = engine::kExitOk;
  if (args->Has("--json")) {
    engine::JsonWriter j;
    j.BeginArray();
    for (const auto& s : *list) {
      j.BeginObject().Key("name").String(s.name).Key("path").String(s.path);
      if (s.backup) {
        j.Key("timestamp")
            .String(s.backup->header().timestamp)
            .Key("uuid")
            .String(s.backup->header().uuid);
        j.Key("depth")
            .Number(static_cast<uint64_t>(s.depth))
            .Key("files")
            .Number(s.backup->manifest().num_entries());
        j.Key("total_size").Number(s.total_size).Key("stored_bytes").Number(s.stored_bytes);
        j.Key("incomplete").Number(s.backup->header().incomplete);
      } else {
        j.Key("error").String(s.status.ToString());
      }
      j.EndObject();
    }
    j.EndArray();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("%-20s %-19s %5s %9s %11s %11s\n", "BACKUP", "TIMESTAMP", "DEPTH", "FILES", "TOTAL",
                "STORED");
    for (const auto& s : *list) {
      if (!s.backup) {
        std::printf("%-20s %s\n", engine::EscapeForMessage(s.name).c_str(),
                    s.status.ToString().c_str());
        code = engine::ExitCodeFor(s.status);
        continue;
      }
      const uint64_t missing = s.backup->header().incomplete;
      std::printf(
          "%-20s %-19s %5d %9zu %11s %11s%s\n", engine::EscapeForMessage(s.name).c_str(),
          s.backup->header().timestamp.c_str(), s.depth, s.backup->manifest().num_entries(),
          HumanBytes(s.total_size).c_str(), HumanBytes(s.stored_bytes).c_str(),
          missing ? ("  incomplete (" + std::to_string(missing) + " missing)").c_str() : "");
    }
  }
  return code;
}

}  // namespace stitchfs::cli
