// What `stitch --help` and `stitch COMMAND --help` print besides the usage lines: what each
// command does, an example, and the exit codes (listed once, in `stitch --help`).
#pragma once

#include <cstdio>

namespace stitchfs::cli {

// True if the arguments after the command (argv[1..argc)) ask for its help: -h or --help
// before any "--".
bool WantsHelp(int argc, char** argv);

// The help of command `name`, whose usage line is `usage` ("backup SOURCE DEST ..."). Returns
// false if `name` has none (every command of stitch has one; a test checks).
bool PrintCommandHelp(FILE* out, const char* name, const char* usage);

// What `stitch --help` prints after the list of commands: options every command takes,
// examples, and the exit codes of stitch and stitchfs.
void PrintGeneralHelp(FILE* out);

}  // namespace stitchfs::cli
