#include "diskprobe/core/json_io.h"

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
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
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

// Length of the valid UTF-8 sequence at s[i], 0 when the byte there starts none.
size_t utf8_length(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  auto cont = [&](size_t k) { return k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(i + 1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(i + 1) || !cont(i + 2)) return 0;
    if (c == 0xE0 && b(i + 1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(i + 1) > 0x9F) return 0;   // UTF-16 surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(i + 1) || !cont(i + 2) || !cont(i + 3)) return 0;
    if (c == 0xF0 && b(i + 1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(i + 1) > 0x8F) return 0;   // above U+10FFFF
    return 4;
  }
  return 0;
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
    size_t n = utf8_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
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
