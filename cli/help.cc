#include "cli/help.h"

#include <cstring>

#include "engine/base/error_table.h"

namespace stitchfs::cli {
namespace {

struct CommandHelp {
  const char* name;
  const char* what;
  const char* example;
};

constexpr CommandHelp kHelp[] = {
    {"backup",
     "A full backup of folder SOURCE into the new backup DEST; with --base, an incremental\n"
     "backup on BASE that stores only new files and the appended bytes of grown ones.",
     "stitch backup /srv/data /backups/2026-10-02 --base /backups/2026-10-01"},
    {"diff",
     "What changed from OLD to NEW, from the manifests alone: A added, D removed, + appended\n"
     "(with the byte count), M rewritten, R renamed, m metadata only.",
     "stitch diff /backups/2026-10-01 /backups/2026-10-02"},
    {"flatten", "One point in time as a self-contained full backup at DEST, so its bases can go.",
     "stitch flatten /backups/2026-10-02 /archive/2026-10-02"},
    {"info",
     "A backup's header, its chain of bases (where each was found, and why) and what it stores.",
     "stitch info /backups/2026-10-02"},
    {"log", "The backups of a store (a folder of backups): time, chain depth, files, sizes.",
     "stitch log /backups"},
    {"ls",
     "The entries of a folder of a backup (the root, or PATH); -l with sizes and where their\n"
     "bytes are stored, -R for everything below it.",
     "stitch ls /backups/2026-10-02 data -l"},
    {"prune",
     "Removes the backups of STORE that the policy does not keep; a kept backup whose base goes\n"
     "is flattened first. Safe to interrupt; --dry-run shows the plan.",
     "stitch prune /backups --keep-last 7 --keep-monthly 12"},
    {"cat", "One file of a backup on standard output, checked against its checksum.",
     "stitch cat /backups/2026-10-02 metadata/shop/events.sql"},
    {"restore",
     "The backup (or the named PATHs in it) written into the new folder TARGET, byte-exact,\n"
     "with modes, owners and times.",
     "stitch restore /backups/2026-10-02 /srv/restored data/shop/log"},
    {"verify", "Reads every file of the backup through its chain and checks its checksum.",
     "stitch verify /backups/2026-10-02"},
};

struct ExitCodeLine {
  int code;
  const char* meaning;
};

constexpr ExitCodeLine kExitCodes[] = {
    {engine::kExitOk, "success"},
    {engine::kExitFailure, "failure (an I/O error after the backup opened; an incomplete backup)"},
    {engine::kExitUsage, "bad command line"},
    {engine::kExitNotFound, "BACKUP_NOT_FOUND"},
    {engine::kExitVersion, "BACKUP_VERSION_NOT_SUPPORTED"},
    {engine::kExitEntryNotFound, "BACKUP_ENTRY_NOT_FOUND"},
    {engine::kExitAlreadyExists, "BACKUP_ALREADY_EXISTS"},
    {engine::kExitNotSupported, "not supported by this build (an archive written to, ...)"},
    {engine::kExitAccessDenied, "ACCESS_DENIED (object storage refused the credentials)"},
    {engine::kExitDamaged, "BACKUP_DAMAGED"},
    {engine::kExitNoBase, "NO_BASE_BACKUP"},
    {engine::kExitWrongBase, "WRONG_BASE_BACKUP"},
    {engine::kExitInsecurePath, "INSECURE_PATH"},
    {engine::kExitEndOfFile, "EXPECTED_END_OF_FILE"},
    {engine::kExitMount, "stitchfs only: the mount itself failed"},
};

}  // namespace

bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--")) return false;
    if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) return true;
  }
  return false;
}

bool PrintCommandHelp(FILE* out, const char* name, const char* usage) {
  for (const CommandHelp& h : kHelp) {
    if (std::strcmp(h.name, name) != 0) continue;
    std::fprintf(out, "usage: stitch %s\n%s\n\nexample:\n  %s\n\n", usage, h.what, h.example);
    std::fprintf(out,
                 "options of every command: --backups-root DIR, --clickhouse-config FILE,\n"
                 "  --disk NAME=DIR (where base locators lead), --help\n"
                 "A backup or store may be a folder, an archive or s3://BUCKET/PREFIX.\n"
                 "Exit codes: stitch --help.\n");
    return true;
  }
  return false;
}

void PrintGeneralHelp(FILE* out) {
  std::fprintf(
      out,
      "\nEvery command also takes --backups-root DIR, --clickhouse-config FILE and --disk\n"
      "NAME=DIR (where base locators lead); those that open a backup take --base DIR\n"
      "(its base, found otherwise). A backup or store may be a folder, an archive\n"
      "(.zip, .tar, .tar.zst, ...) or s3://BUCKET/PREFIX.\n"
      "\nexamples:\n"
      "  stitch backup /srv/data /backups/2026-10-01\n"
      "  stitch backup /srv/data /backups/2026-10-02 --base /backups/2026-10-01\n"
      "  stitch log /backups\n"
      "  stitchfs /backups /mnt/backups    # every backup, latest/, at/<time>/\n"
      "  stitch COMMAND --help             # one command, with an example\n"
      "\nexit codes (stitch and stitchfs):\n");
  for (const ExitCodeLine& e : kExitCodes) std::fprintf(out, "  %2d  %s\n", e.code, e.meaning);
  std::fprintf(out, "See stitch(1) and stitchfs(1).\n");
}

}  // namespace stitchfs::cli
