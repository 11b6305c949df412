// stitch flatten BACKUP DEST [--json]: a self-contained copy of one point in time.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/interrupt.h"
#include "engine/base/json_writer.h"
#include "engine/write/flatten.h"

namespace stitchfs::cli {

int CmdFlatten(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{"--json"}, {}, 2, 2, 2}, &args, &code);
  if (!chain) return code;
  engine::StopOnSignals();  // Ctrl-C unwinds: the partial copy is removed.
  auto r = engine::FlattenBackup(*chain, args.positional[1]);
  if (!r.ok()) return Fail(r.status());
  if (args.Has("--json")) {
    engine::JsonWriter j;
    j.BeginObject().Key("backup").String(args.positional[1]).Key("uuid").String(r->uuid);
    j.Key("files").Number(r->files).Key("bytes_stored").Number(r->bytes_stored).EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::fprintf(stderr, "flattened %s into %s: %llu files, %s stored (uuid %s)\n",
                 engine::EscapeForMessage(chain->top().path()).c_str(),
                 engine::EscapeForMessage(args.positional[1]).c_str(),
                 static_cast<unsigned long long>(r->files), HumanBytes(r->bytes_stored).c_str(),
                 r->uuid.c_str());
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
