// stitch verify BACKUP [--json]: reads every file through the chain and checks it.
#include <cstdio>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/read/verify.h"

namespace stitchfs::cli {

int CmdVerify(int argc, char** argv) {
  Args args;
  int code = 0;
  auto chain = OpenChainFromArgs(argc, argv, {{"--json"}, {}, 1, 1, 1}, &args, &code);
  if (!chain) return code;
  const engine::Manifest& m = chain->top().manifest();
  uint64_t total = 0;
  for (size_t i = 0; i < m.num_entries(); ++i) total += m.entry(i).size;
  Progress bar("verify", m.num_entries(), total);
  engine::VerifyResult r =
      engine::VerifyBackup(*chain, [&](uint64_t f, uint64_t b) { bar.Update(f, b); });
  bar.Done();
  if (args.Has("--json")) {
    engine::JsonWriter j;
    j.BeginObject().Key("backup").String(chain->top().path());
    j.Key("ok").Bool(r.problems.empty()).Key("files_checked").Number(r.files_checked);
    j.Key("bytes_read").Number(r.bytes_read).Key("problems").BeginArray();
    for (const auto& p : r.problems) {
      j.BeginObject().Key("entry").String(p.entry);
      j.Key("code").String(engine::ErrorCodeName(p.status.code()));
      j.Key("message").String(p.status.message()).EndObject();
    }
    j.EndArray().EndObject();
    std::printf("%s\n", j.str().c_str());
  } else {
    for (const auto& p : r.problems) {
      std::printf("PROBLEM %s: %s\n", engine::EscapeForMessage(p.entry).c_str(),
                  p.status.ToString().c_str());
    }
    std::printf("%s: %llu files, %llu bytes read, %zu problem%s\n",
                r.problems.empty() ? "OK" : "DAMAGED",
                static_cast<unsigned long long>(r.files_checked),
                static_cast<unsigned long long>(r.bytes_read), r.problems.size(),
                r.problems.size() == 1 ? "" : "s");
  }
  return r.problems.empty() ? engine::kExitOk : engine::ExitCodeFor(r.problems.front().status);
}

}  // namespace stitchfs::cli
