// Subcommands that read JSON run reports back: compare and aggregate. Each returns the
// process exit code (DESIGN.md): 0, 2 for bad input, 4 for a regression or failed expectations.
#pragma once

#include "args.h"

namespace diskprobe::cli {

int cmd_compare(const Args& a);
int cmd_aggregate(const Args& a);

}  // namespace diskprobe::cli
