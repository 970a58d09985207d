#include "diskprobe/base/problems.h"

namespace diskprobe {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) s += sep;
    s += parts[i];
  }
  return s;
}

std::string join_problems(std::string_view where, const std::vector<std::string>& problems, size_t shown) {
  std::string msg = std::string(where) + ": " + std::to_string(problems.size()) + " problem" +
                    (problems.size() == 1 ? "" : "s") + ": ";
  if (shown >= problems.size()) return msg + join(problems);
  msg += join(std::vector<std::string>(problems.begin(), problems.begin() + static_cast<std::ptrdiff_t>(shown)));
  return msg + "; and " + std::to_string(problems.size() - shown) + " more";
}

Status problems_status(const std::vector<std::string>& problems) {
  if (problems.empty()) return Ok{};
  return make_error(join(problems));
}

}  // namespace diskprobe
