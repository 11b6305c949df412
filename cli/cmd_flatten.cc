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
  const engine::Manifest& m = chain->top().manifest();
  uint64_t total = 0, done = 0;
  for (size_t i = 0; i < m.num_entries(); ++i) total += engine::kFlattenPasses * m.entry(i).size;
  Progress bar("flatten", 0, total);
  auto r = engine::FlattenBackup(*chain, args.positional[1], /*keep_uuid=*/false, chain->storage(),
                                 [&](uint64_t n) { bar.Update(0, done += n); });
  bar.Done();
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
