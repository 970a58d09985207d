// diskprobe's exit codes, the README's table: one place for every subcommand.
#pragma once

namespace diskprobe {

enum Exit { kOk = 0, kRuntime = 1, kUsage = 2, kRefused = 3, kExpectations = 4 };

}  // namespace diskprobe
