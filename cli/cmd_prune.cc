// stitch prune STORE --keep-last N [--keep-daily N] [--keep-monthly N] [--dry-run] [--json]
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/format/manifest_cache.h"
#include "engine/store/prune.h"

namespace stitchfs::cli {
namespace {

const char* KindName(engine::PruneAction::Kind k) {
  switch (k) {
    case engine::PruneAction::kKeep:
      return "keep";
    case engine::PruneAction::kFlatten:
      return "flatten";
    case engine::PruneAction::kRemove:
      return "remove";
  }
  return "?";
}

}  // namespace

int CmdPrune(int argc, char** argv) {
  auto args = ParseArgs(
      argc, argv, 1,
      {{"--dry-run", "--json"}, {"--keep-last", "--keep-daily", "--keep-monthly"}, 1, 1, 1});
  if (!args.ok()) return Fail(args.status());
  engine::PrunePolicy p;
  for (auto [opt, field] :
       {std::pair{"--keep-last", &p.keep_last}, std::pair{"--keep-daily", &p.keep_daily},
        std::pair{"--keep-monthly", &p.keep_monthly}}) {
    const std::string v = args->Value(opt, "0");
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n < 0 || n > 1000000) {
      return Fail(engine::Status::InvalidArgument(std::string(opt) + " takes a count, got " + v));
    }
    *field = static_cast<int>(n);
  }
  p.dry_run = args->Has("--dry-run");
  Progress bar("prune: flatten", 0, 0);  // The long part: kept backups whose base goes.
  engine::Context ctx = ContextFrom(*args);
  ctx.warn = [](const std::string& w) {
    std::fprintf(stderr, "stitch: warning: %s\n", engine::EscapeForMessage(w).c_str());
  };
  ctx.progress = [&](const std::string&, uint64_t done, uint64_t total) {
    bar.SetTotals(0, total);
    bar.Update(0, done);
  };
  auto plan = engine::PruneStore(args->positional[0], p, ctx);
  bar.Done();
  if (!plan.ok()) return Fail(plan.status());
  uint64_t freed = 0, written = 0, flattened = 0;
  engine::JsonWriter j;
  j.BeginArray();
  for (const auto& a : *plan) {
    freed += a.freed;
    written += a.written;
    j.BeginObject().Key("action").String(KindName(a.kind)).Key("backup").String(a.name);
    j.Key("reason").String(a.why).Key("freed").Number(a.freed).Key("written").Number(a.written);
    // "bytes" as before: freed by a removal, written by a flattening.
    j.Key("bytes").Number(a.kind == engine::PruneAction::kFlatten ? a.written : a.freed);
    j.EndObject();
    if (args->Has("--json")) continue;
    // Names escaped: one backup per line, whatever the store's folders are called.
    const std::string name = engine::EscapeForMessage(a.name);
    const std::string why = engine::EscapeForMessage(a.why);
    if (a.kind == engine::PruneAction::kFlatten) {
      ++flattened;
      std::printf("flatten %s (its base %s goes): %s freed%s\n", name.c_str(), why.c_str(),
                  HumanBytes(a.freed).c_str(),
                  p.dry_run ? "" : (", " + HumanBytes(a.written) + " written").c_str());
    } else if (a.kind == engine::PruneAction::kRemove) {
      std::printf("remove  %s (%s)\n", name.c_str(), HumanBytes(a.freed).c_str());
    } else {
      std::printf("keep    %s (%s)\n", name.c_str(), why.c_str());
    }
  }
  j.EndArray();
  if (args->Has("--json")) {
    std::printf("%s\n", j.str().c_str());
  } else if (p.dry_run) {
    std::printf("dry run: would have %s freed%s\n", HumanBytes(freed).c_str(),
                flattened ? " and written a full copy of each backup flattened" : "");
  } else {
    std::printf("%s freed, %s written by flattening\n", HumanBytes(freed).c_str(),
                HumanBytes(written).c_str());
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
