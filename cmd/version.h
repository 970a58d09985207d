// `diskprobe --version`: what was built, against what, and what the running kernel offers.
#pragma once

#include <string>

#include "diskprobe/engine/uring_features.h"

namespace diskprobe::cli {

std::string version_text(const UringFeatures& kernel);

}  // namespace diskprobe::cli
