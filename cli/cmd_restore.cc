// stitch restore BACKUP TARGET [PATH...]: writes the tree (or the named paths) byte-exact.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/read/restore.h"

namespace stitchfs::cli {

int CmdRestore(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{"--json"}, {}, 2, 1 << 20, 2}, &args, &code);
  if (!chain) return code;
  engine::RestoreOptions o;
  o.target = args.positional[1];
  o.paths.assign(args.positional.begin() + 2, args.positional.end());
  const engine::Manifest& m = chain->top().manifest();
  auto selected = engine::SelectEntries(m, o.paths);
  if (!selected.ok()) return Fail(selected.status().WithPrefix(chain->top().Prefix()));
  uint64_t total = 0;
  for (size_t i : *selected) total += m.entry(i).size;
  Progress bar("restore", selected->size(), total);
  auto r = engine::RestoreBackup(*chain, o, [&](uint64_t f, uint64_t b) { bar.Update(f, b); });
  bar.Done();
  if (!r.ok()) {  // Named: the backup at fault, the target refused, or else both.
    const std::string why = r.status().message();  // (status() is a copy.)
    const bool named = why.rfind("Backup ", 0) == 0 || why.find(o.target) != std::string::npos;
    return Fail(r.status().WithPrefix(
        named ? "" : "restore of " + chain->top().path() + " into " + o.target + ": "));
  }
  if (args.Has("--json")) {
    engine::JsonWriter j;
    j.BeginObject().Key("files").Number(r->files).Key("bytes").Number(r->bytes).EndObject();
    std::printf("%s\n", j.str().c_str());
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
