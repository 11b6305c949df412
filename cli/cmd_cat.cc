// stitch cat BACKUP PATH: the file's bytes, stitched through the chain, to stdout.
#include <memory>

#include "cli/commands.h"
#include "engine/base/error_table.h"

namespace stitchfs::cli {

int CmdCat(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{}, {}, 2, 2, 1}, &args, &code);
  if (!chain) return code;
  std::string name = args.positional[1];
  while (!name.empty() && name.front() == '/') name.erase(0, 1);
  auto idx = chain->top().manifest().FindByName(name);
  if (!idx) {
    return Fail(engine::Status::EntryNotFound(chain->top().Prefix() + "Entry \"" + name +
                                              "\" not found in the backup"));
  }
  auto file = chain->OpenEntry(*idx);
  if (!file.ok()) return Fail(file.status());
  constexpr size_t kChunk = 1 << 20;
  auto buf = std::make_unique<char[]>(kChunk);
  for (uint64_t off = 0; off < (*file)->size();) {
    auto n = (*file)->ReadAt(off, std::span<char>(buf.get(), kChunk));
    if (!n.ok()) return Fail(n.status());
    if (!WriteStdout(buf.get(), *n)) return Fail(engine::Status::IOError("write to stdout", errno));
    off += *n;
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
