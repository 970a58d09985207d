// The signals that stop a run cleanly (restore every setting, remove the scratch device): the
// launcher blocks exactly these before anything else runs, main.cpp's .preinit_array code
// installs their handler and unblocks exactly these.
#pragma once

#include <signal.h>

namespace diskprobe::cli {

inline constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP};

}  // namespace diskprobe::cli
