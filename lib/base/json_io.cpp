#include "diskprobe/base/json_io.h"

#include <cstdint>

namespace diskprobe {

using nlohmann::json;

namespace {

// A scan before the parse: nlohmann parses iteratively, but what follows a parse recurses.
bool nests_deeper_than(std::string_view t, size_t limit) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < t.size(); ++i) {
    char c = t[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return true;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return false;
}

// nlohmann's message without its "[json.exception.parse_error.101] " prefix, shortened: its
// "last read" quotes the whole token, which may be megabytes.
std::string reason(const json::exception& e) {
  std::string_view w = e.what();
  if (auto close = w.find("] "); w.rfind("[json.exception.", 0) == 0 && close != std::string_view::npos) {
    w.remove_prefix(close + 2);
  }
  return excerpt(w, 160);
}

// The sequence at s[i]: its length when it is valid UTF-8, else minus the length of the
// longest start of one there (replaced by one U+FFFD, as nlohmann's dump does).
int utf8_sequence(std::string_view s, size_t i) {
  auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x80) return 1;
  int need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range; later ones are 80..BF
  if (c >= 0xC2 && c <= 0xDF) {
    need = 1;
  } else if (c >= 0xE0 && c <= 0xEF) {
    need = 2;
    if (c == 0xE0) lo = 0xA0;  // overlong
    if (c == 0xED) hi = 0x9F;  // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    need = 3;
    if (c == 0xF0) lo = 0x90;  // overlong
    if (c == 0xF4) hi = 0x8F;  // above U+10FFFF
  } else {
    return -1;
  }
  for (int k = 1; k <= need; ++k) {
    size_t at = i + static_cast<size_t>(k);
    if (at >= s.size()) return -k;
    auto b = static_cast<unsigned char>(s[at]);
    if (b < lo || b > hi) return -k;
    lo = 0x80;
    hi = 0xBF;
  }
  return need + 1;
}

}  // namespace

Result<json> parse_json(std::string_view text, const std::string& origin) {
  if (nests_deeper_than(text, kMaxJsonDepth)) {
    return make_error(origin + ": not valid here: arrays and objects nested more than " +
                      std::to_string(kMaxJsonDepth) + " deep");
  }
  try {
    return json::parse(text);
  } catch (const json::out_of_range& e) {
    return make_error(origin + ": a number out of range: " + reason(e));
  } catch (const json::exception& e) {
    return make_error(origin + ": not valid JSON: " + reason(e));
  }
}

std::string dump_json(const json& j, int indent) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    int n = utf8_sequence(s, i);
    if (n < 0)
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    else
      out.append(s.substr(i, static_cast<size_t>(n)));
    i += static_cast<size_t>(n < 0 ? -n : n);
  }
  return out;
}

std::string excerpt(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not mid-character
  return std::string(s.substr(0, cut)) + "... (" + std::to_string(s.size()) + " bytes)";
}

}  // namespace diskprobe
