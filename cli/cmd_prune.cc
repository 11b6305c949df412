// stitch prune STORE --keep-last N [--keep-daily N] [--keep-monthly N] [--dry-run] [--json]
#include <cstdio>
#include <cstdlib>

#include "cli/commands.h"
#include "cli/progress.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/storage/manifest_cache.h"
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
  auto plan = engine::PruneStore(args->positional[0], p, engine::ManifestCache::Default(),
                                 args->locators, [&](uint64_t done, uint64_t total) {
                                   bar.SetTotals(0, total);
                                   bar.Update(0, done);
                                 });
  bar.Done();
  if (!plan.ok()) return Fail(plan.status());
  uint64_t freed = 0, written = 0;
  engine::JsonWriter j;
  j.BeginArray();
  for (const auto& a : *plan) {
    (a.kind == engine::PruneAction::kRemove ? freed : written) += a.bytes;
    j.BeginObject().Key("action").String(KindName(a.kind)).Key("backup").String(a.name);
    j.Key("reason").String(a.why).Key("bytes").Number(a.bytes).EndObject();
    if (args->Has("--json")) continue;
    if (a.kind == engine::PruneAction::kFlatten) {
      std::printf("flatten %s (its base %s goes)%s\n", a.name.c_str(), a.why.c_str(),
                  p.dry_run ? "" : (", wrote " + HumanBytes(a.bytes)).c_str());
    } else if (a.kind == engine::PruneAction::kRemove) {
      std::printf("remove  %s (%s)\n", a.name.c_str(), HumanBytes(a.bytes).c_str());
    } else {
      std::printf("keep    %s (%s)\n", a.name.c_str(), a.why.c_str());
    }
  }
  j.EndArray();
  if (args->Has("--json")) {
    std::printf("%s\n", j.str().c_str());
  } else {
    std::printf("%s%s freed, %s written by flattening\n", p.dry_run ? "dry run: would have " : "",
                HumanBytes(freed).c_str(), HumanBytes(written).c_str());
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
