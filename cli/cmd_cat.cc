// stitch cat BACKUP PATH: the file's bytes, stitched through the chain, to stdout, checked
// against the manifest's checksum as they go (a mismatch: exit 20 after the bytes).
#include <memory>
#include <string>

#include "cli/commands.h"
#include "engine/base/error_table.h"
#include "engine/read/content_check.h"

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
  engine::ContentCheck check(*chain, *idx);  // Bad bytes out are followed by exit 20.
  constexpr size_t kChunk = 1 << 20;
  auto buf = std::make_unique<char[]>(kChunk);
  for (uint64_t off = 0; off < (*file)->size();) {
    auto n = (*file)->ReadAt(off, std::span<char>(buf.get(), kChunk));
    if (!n.ok()) return Fail(n.status());
    if (*n == 0) break;  // Finish says how short the file is.
    check.Update(std::string_view(buf.get(), *n));
    if (!WriteStdout(buf.get(), *n)) return Fail(engine::Status::IOError("write to stdout", errno));
    off += *n;
  }
  if (auto s = check.Finish(); !s.ok()) {
    // The bytes are out: what can be done is that the next read does not get them again.
    if ((*file)->DropCached()) {
      s = s.WithSuffix(std::string(engine::kKeptCopiesDropped) +
                       ": a new read fetches them from the storage");
    }
    return Fail(s);
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
