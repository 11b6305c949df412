// The `stitch` subcommands. Each parses its own arguments (argv[0] is the subcommand) and
// returns an exit code from engine/base/error_table.h.
#pragma once

#include <memory>

#include "cli/args.h"
#include "engine/read/resolved_backup.h"

namespace stitchfs::cli {

int CmdBackup(int argc, char** argv);
int CmdDiff(int argc, char** argv);
int CmdFlatten(int argc, char** argv);
int CmdInfo(int argc, char** argv);
int CmdLog(int argc, char** argv);
int CmdLs(int argc, char** argv);
int CmdPrune(int argc, char** argv);
int CmdCat(int argc, char** argv);
int CmdRestore(int argc, char** argv);
int CmdVerify(int argc, char** argv);

// Prints "stitch: <status>" on stderr and returns its exit code.
int Fail(const engine::Status& s);

// Parses args with `spec` (plus --disk/--base) and opens the backup positional[0] with its
// chain. On failure prints the error and stores the exit code in *exit_code.
std::shared_ptr<const engine::ResolvedBackup> OpenChainFromArgs(
    int argc, char** argv, const ArgSpec& spec, Args* args, int* exit_code,
    const engine::ResolveOptions& resolve = {});

// Writes all of `data` to stdout; false if stdout is closed or failing.
bool WriteStdout(const char* data, size_t n);

}  // namespace stitchfs::cli
