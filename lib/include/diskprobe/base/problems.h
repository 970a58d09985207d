#pragma once
// Every problem found, said at once, so a user fixes them all in one go instead of one per try.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "diskprobe/base/status.h"

namespace diskprobe {

// "a; b; c".
std::string join(const std::vector<std::string>& parts, std::string_view sep = "; ");

// "WHERE: 3 problems: a; b; c"; past `shown` of them, "; and N more".
std::string join_problems(std::string_view where, const std::vector<std::string>& problems,
                          size_t shown = static_cast<size_t>(-1));

// Ok when there are none, else one error naming them all ("a; b; c").
Status problems_status(const std::vector<std::string>& problems);

}  // namespace diskprobe
