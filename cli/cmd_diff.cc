// stitch diff OLD NEW [PATH] [--json]: what changed, from the manifests alone.
#include <cstdio>

#include "cli/commands.h"
#include "engine/base/error_table.h"
#include "engine/base/json_writer.h"
#include "engine/read/backup_diff.h"
#include "engine/read/open_resolved.h"

namespace stitchfs::cli {
namespace {

// One letter per kind, like `git status --short`: A D + M R m.
char Letter(engine::ChangeKind k) {
  switch (k) {
    case engine::ChangeKind::kAdded:
      return 'A';
    case engine::ChangeKind::kRemoved:
      return 'D';
    case engine::ChangeKind::kAppended:
      return '+';
    case engine::ChangeKind::kRewritten:
      return 'M';
    case engine::ChangeKind::kRenamed:
      return 'R';
    case engine::ChangeKind::kMetadata:
      return 'm';
  }
  return '?';
}

void PrintJson(const std::vector<engine::Change>& changes) {
  engine::JsonWriter j;
  j.BeginArray();
  for (const auto& c : changes) {
    j.BeginObject().Key("change").String(engine::ChangeKindName(c.kind)).Key("name").String(c.name);
    if (c.kind == engine::ChangeKind::kRenamed) j.Key("old_name").String(c.old_name);
    j.Key("old_size").Number(c.old_size).Key("new_size").Number(c.new_size);
    if (c.kind == engine::ChangeKind::kAppended) j.Key("appended").Number(c.appended);
    j.EndObject();
  }
  j.EndArray();
  std::printf("%s\n", j.str().c_str());
}

}  // namespace

int CmdDiff(int argc, char** argv) {
  auto args = ParseArgs(argc, argv, 1, WithChainOptions({{"--json"}, {}, 2, 3, 2}));
  if (!args.ok()) return Fail(args.status());
  auto options = ChainOptionsFrom(*args);
  if (!options.ok()) return Fail(options.status());
  options->base_override.clear();
  auto old_chain = engine::OpenResolved(args->positional[0], *options);
  if (!old_chain.ok()) return Fail(old_chain.status());
  engine::ResolveOptions prefixes;
  prefixes.prefixes = true;  // What tells an append from a rewrite.
  auto new_chain = engine::OpenResolved(args->positional[1], *options, prefixes);
  if (!new_chain.ok()) return Fail(new_chain.status());
  std::string prefix = args->positional.size() > 2 ? args->positional[2] : "";
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  auto changes = engine::DiffBackups(**old_chain, **new_chain, prefix);
  if (!changes.ok()) return Fail(changes.status());
  if (args->Has("--json")) {
    PrintJson(*changes);
    return engine::kExitOk;
  }
  for (const auto& c : *changes) {
    // Names escaped: one change per line, whatever the names hold.
    const std::string name = engine::EscapeForMessage(c.name);
    if (c.kind == engine::ChangeKind::kRenamed) {
      std::printf("R %s -> %s\n", engine::EscapeForMessage(c.old_name).c_str(), name.c_str());
    } else if (c.kind == engine::ChangeKind::kAppended) {
      std::printf("+ %s (+%llu bytes)\n", name.c_str(),
                  static_cast<unsigned long long>(c.appended));
    } else {
      std::printf("%c %s\n", Letter(c.kind), name.c_str());
    }
  }
  return engine::kExitOk;
}

}  // namespace stitchfs::cli
