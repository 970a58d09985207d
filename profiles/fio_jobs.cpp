// fio's command line and job files into jobs with their options (fio_jobs.h says the rules).
#include "diskprobe/profiles/fio_jobs.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <set>

#include "diskprobe/base/json_io.h"
#include "diskprobe/base/sysroot.h"
#include "diskprobe/base/units.h"

namespace diskprobe::profiles::fio {

namespace {

namespace fs = std::filesystem;

// An include that includes itself must end somewhere; fio's own limit is the stack.
constexpr int kMaxIncludeDepth = 16;
// A job file is text a person wrote: 16 MiB is far beyond any.
constexpr uint64_t kMaxJobFileBytes = 16ull << 20;

// fio's command-line flags (init.c's l_opts), with or without a value.
const std::set<std::string>& flags_with_value() {
  static const std::set<std::string> k = {
      "output",        "output_format", "cmdhelp",        "enghelp",   "eta",         "eta_interval",
      "eta_newline",   "status_interval", "section",      "alloc_size", "profile",    "max_jobs",
      "server",        "daemonize",     "client",         "remote_config", "crctest", "idle_prof",
      "inflate_log",   "trigger_file",  "trigger_timeout", "trigger",  "trigger_remote", "aux_path",
      "terse_version", "debug"};
  return k;
}
const std::set<std::string>& flags_alone() {
  static const std::set<std::string> k = {"latency_log", "append_terse", "bandwidth_log", "minimal",
                                          "version",     "help",         "showcmd",       "readonly",
                                          "parse_only",  "warnings_fatal", "cpuclock_test", "merge_blktrace_only"};
  return k;
}

// fio's FIO_OPT_STR_SET options: on the command line they take a value only as --opt=val.
bool is_set_switch(const std::string& key) {
  static const std::set<std::string> k = {
      "time_based",   "norandommap",   "thread",          "group_reporting", "stonewall", "wait_for_previous",
      "new_group",    "exitall",       "exitall_on_error", "refill_buffers", "zero_buffers", "sqthread_poll",
      "hipri",        "fixedbufs",     "registerfiles",   "verify_only",     "nonvectored", "uncached"};
  return k.count(key) > 0;
}

std::string underscores(std::string s) {
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
}

// fio's strip_blank_front and strip_blank_end: spaces, and control characters at the end too
// (base's trim() takes only whitespace).
std::string strip_blank(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && (std::isspace(static_cast<unsigned char>(s[e - 1])) || std::iscntrl(static_cast<unsigned char>(s[e - 1]))))
    --e;
  return std::string(s.substr(b, e - b));
}

// "key=value", "key = value" or "key": the option of one line or argument.
Option split_option(const std::string& text, std::string where) {
  Option o;
  o.where = std::move(where);
  auto eq = text.find('=');
  if (eq == std::string::npos) {
    o.key = underscores(strip_blank(text));
  } else {
    o.key = underscores(strip_blank(text.substr(0, eq)));
    o.value = strip_blank(text.substr(eq + 1));
  }
  return o;
}

// --- arithmetic: fio evaluates a value that starts with '(' ----------------------------------

class Arithmetic {
 public:
  explicit Arithmetic(std::string_view s) : s_(s) {}
  // The value of the parenthesised prefix; pos() is just past it.
  Result<long double> parenthesised() { return primary(); }
  size_t pos() const { return i_; }

 private:
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  Error bad(const std::string& what) {
    return make_error("arithmetic '" + excerpt(s_) + "': " + what + " at column " + std::to_string(i_ + 1));
  }
  Result<long double> sum() {
    auto a = product();
    if (!a) return a;
    long double v = *a;
    for (;;) {
      space();
      if (i_ >= s_.size() || (s_[i_] != '+' && s_[i_] != '-')) return v;
      char op = s_[i_++];
      auto b = product();
      if (!b) return b;
      v = op == '+' ? v + *b : v - *b;
    }
  }
  Result<long double> product() {
    auto a = power();
    if (!a) return a;
    long double v = *a;
    for (;;) {
      space();
      if (i_ >= s_.size() || (s_[i_] != '*' && s_[i_] != '/' && s_[i_] != '%')) return v;
      char op = s_[i_++];
      auto b = power();
      if (!b) return b;
      if ((op == '/' || op == '%') && *b == 0) return bad("division by zero");
      if (op == '*') {
        v *= *b;
      } else if (op == '/') {
        v /= *b;
      } else {
        v = static_cast<long double>(static_cast<long long>(v) % static_cast<long long>(*b));
      }
    }
  }
  Result<long double> power() {
    auto a = unary();
    if (!a) return a;
    space();
    if (i_ < s_.size() && s_[i_] == '^') {
      ++i_;
      auto b = power();  // right-associative
      if (!b) return b;
      long double v = 1;
      if (*b < 0 || *b > 64) return bad("exponent out of range");
      for (int k = 0; k < static_cast<int>(*b); ++k) v *= *a;
      return v;
    }
    return a;
  }
  Result<long double> unary() {
    space();
    if (i_ < s_.size() && s_[i_] == '-') {
      ++i_;
      auto v = unary();
      if (!v) return v;
      return -*v;
    }
    return primary();
  }
  Result<long double> primary() {
    space();
    if (i_ >= s_.size()) return bad("a number or '(' expected");
    if (s_[i_] == '(') {
      if (++depth_ > 64) return bad("nested too deeply");
      ++i_;
      auto v = sum();
      if (!v) return v;
      space();
      if (i_ >= s_.size() || s_[i_] != ')') return bad("')' expected");
      ++i_;
      --depth_;
      return v;
    }
    size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
    std::string_view word = s_.substr(start, i_ - start);
    if (word.empty()) return bad("a number expected");
    if (auto d = parse_decimal(word)) return static_cast<long double>(*d);
    if (auto n = parse_size(word)) return static_cast<long double>(*n);  // 4k inside an expression
    i_ = start;
    return bad("'" + std::string(word) + "' is not a number");
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

// --- job files --------------------------------------------------------------------------------

struct Section {
  std::string name, where;
  std::vector<Option> options;
};

// fio's strip_blank_end: a ';' or '#' anywhere ends the line's text.
std::string without_comment(const std::string& line) {
  size_t cut = line.find_first_of(";#");
  return strip_blank(cut == std::string::npos ? line : line.substr(0, cut));
}

Status read_lines(const std::string& path, std::vector<std::string>& lines) {
  auto text = read_file(path, kMaxJobFileBytes);
  if (!text) return make_error("job file: " + text.error());
  size_t b = 0;
  while (b <= text->size()) {
    size_t e = text->find('\n', b);
    if (e == std::string::npos) e = text->size();
    lines.push_back(text->substr(b, e - b));
    b = e + 1;
  }
  return Ok{};
}

// "include FILE" in a job file read from `from`: FILE as fio finds it (relative to the working
// directory if it exists there, else to the including file); nullopt for any other line.
std::optional<std::string> include_of(const std::string& line, const std::string& from) {
  if (line.rfind("include", 0) != 0 || (line.size() > 7 && !std::isspace(static_cast<unsigned char>(line[7])))) {
    return std::nullopt;
  }
  std::string inc = strip_blank(line.substr(7));
  if (!fs::exists(inc) && from.find('/') != std::string::npos) inc = fs::path(from).parent_path() / inc;
  return inc;
}

// The option lines of an included file (no sections allowed there, as in fio).
Status read_include(const std::string& path, int depth, std::vector<Option>& out) {
  if (depth > kMaxIncludeDepth) return make_error("include " + path + ": nested more than 16 deep (does it include itself?)");
  std::vector<std::string> lines;
  if (auto st = read_lines(path, lines); !st) return st;
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string where = path + ":" + std::to_string(n + 1);
    std::string line = without_comment(lines[n]);
    if (line.empty()) continue;
    if (line[0] == '[') return make_error(where + ": no new sections in an included file (fio refuses them too)");
    if (auto inc = include_of(line, path)) {
      if (auto st = read_include(*inc, depth + 1, out); !st) return st;
      continue;
    }
    out.push_back(split_option(line, where));
  }
  return Ok{};
}

Result<std::vector<Section>> read_job_file(const std::string& path) {
  std::vector<std::string> lines;
  if (auto st = read_lines(path, lines); !st) return make_error(st.error());
  std::vector<Section> sections;
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string where = path + ":" + std::to_string(n + 1);
    std::string line = without_comment(lines[n]);
    if (line.empty()) continue;
    if (line[0] == '[') {
      auto close = line.find(']');
      if (close == std::string::npos || close == 1) {
        return make_error(where + ": a section header is [NAME]: '" + excerpt(line) + "'");
      }
      sections.push_back({line.substr(1, close - 1), where, {}});
      continue;
    }
    if (sections.empty()) {
      return make_error(where + ": option '" + excerpt(line) + "' outside of a [] job section (as fio says it)");
    }
    if (auto inc = include_of(line, path)) {
      if (auto st = read_include(*inc, 1, sections.back().options); !st) return make_error(st.error());
      continue;
    }
    sections.back().options.push_back(split_option(line, where));
  }
  return sections;
}

bool is_global(const std::string& section) { return section.rfind("global", 0) == 0; }

// fio's option_dup_subs, for one value: ${VAR} from the environment, then the $keywords.
Result<std::string> substitute(const std::string& v, const Environment& env, std::vector<std::string>* unset) {
  std::string out;
  for (size_t i = 0; i < v.size();) {
    if (v.compare(i, 2, "${") == 0) {
      size_t close = v.find('}', i + 2);
      if (close == std::string::npos) return make_error("'" + excerpt(v) + "': ${ without its }");
      std::string name = v.substr(i + 2, close - i - 2);
      auto value = env.getenv ? env.getenv(name) : std::nullopt;
      // fio substitutes an unset variable with nothing; so does this, and says so.
      if (!value && unset) unset->push_back(name);
      out += value.value_or("");
      i = close + 1;
      continue;
    }
    if (v[i] == '$') {
      static const char* kWords[] = {"ncpus", "mb_memory", "pagesize"};
      bool done = false;
      for (const char* w : kWords) {
        size_t len = std::char_traits<char>::length(w);
        if (v.compare(i + 1, len, w) != 0) continue;
        std::string word(w);
        out += word == "ncpus"       ? std::to_string(env.ncpus)
               : word == "mb_memory" ? std::to_string(env.mb_memory)
                                     : std::to_string(env.pagesize);
        i += 1 + len;
        done = true;
        break;
      }
      if (done) continue;
    }
    out += v[i++];
  }
  return out;
}

}  // namespace

Environment Environment::of_this_host() {
  Environment e;
  e.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  e.ncpus = n > 0 ? static_cast<unsigned>(n) : 1;
  long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (page > 0) e.pagesize = static_cast<unsigned>(page);
  if (pages > 0 && page > 0) e.mb_memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) >> 20;
  return e;
}

bool flag_takes_value(const std::string& name) { return flags_with_value().count(underscores(name)) > 0; }
bool is_flag(const std::string& name) {
  std::string n = underscores(name);
  return flags_with_value().count(n) > 0 || flags_alone().count(n) > 0;
}

Result<std::string> expand(const std::string& value, const Environment& env, std::vector<std::string>* unset) {
  auto v = substitute(value, env, unset);
  if (!v || v->empty() || (*v)[0] != '(') return v;
  Arithmetic a(*v);
  auto r = a.parenthesised();
  if (!r) return make_error(r.error());
  std::string suffix = strip_blank(std::string_view(*v).substr(a.pos()));
  long double x = *r;
  if (x < 0) return make_error("'" + excerpt(value) + "' comes to less than 0");
  // Beyond 2^63 no fio option has a use, and the cast below would be undefined.
  if (!(x < 9.2e18L)) return make_error("'" + excerpt(value) + "' comes to more than 2^63");
  // fio's results are integers where a number is whole; a share like (1/3) keeps its decimals.
  char buf[64];
  if (x == static_cast<long double>(static_cast<unsigned long long>(x))) {
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(x));
  } else {
    std::snprintf(buf, sizeof buf, "%.6Lf", x);
  }
  return std::string(buf) + suffix;
}

Result<Input> read_command_line(const std::vector<std::string>& args, const Environment& env) {
  Input in;
  std::vector<Option> globals;  // before the first --name
  std::vector<Job> cli_jobs;
  bool in_global = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& w = args[i];
    std::string where = "argument " + std::to_string(i + 1);
    if (w.size() < 2 || w[0] != '-') {
      in.job_files.push_back(w);
      continue;
    }
    std::string body = w.substr(w[1] == '-' ? 2 : 1);
    std::string name = body.substr(0, body.find('='));
    std::optional<std::string> value;
    if (auto eq = body.find('='); eq != std::string::npos) value = body.substr(eq + 1);
    std::string key = underscores(name);
    if (key.empty()) return make_error(where + " '" + excerpt(w) + "': an option without a name");
    if (is_flag(key)) {
      if (flag_takes_value(key) && !value) {
        if (i + 1 >= args.size()) return make_error("--" + name + " needs a value");
        value = args[++i];
      }
      if (!flag_takes_value(key) && value) return make_error("--" + name + " takes no value");
      in.flags.push_back({key, value.value_or(""), where});
      continue;
    }
    // fio's job options: a value with '=' or in the next word, but for the STR_SET switches.
    if (!value && !is_set_switch(key) && key != "name") {
      if (i + 1 >= args.size()) return make_error("--" + name + " needs a value (fio's --" + name + "=VALUE)");
      value = args[++i];
    }
    if (key == "name") {
      if (!value) {
        if (i + 1 >= args.size()) return make_error("--name needs a value");
        value = args[++i];
      }
      if (is_global(*value)) {
        in_global = true;  // fio: --name=global is a global section, as [global] is
        continue;
      }
      in_global = false;
      cli_jobs.push_back({*value, where, {}, 0, false});
      continue;
    }
    Option o{key, value, where};
    if (cli_jobs.empty() || in_global) {
      globals.push_back(std::move(o));
    } else {
      cli_jobs.back().options.push_back(std::move(o));
    }
  }
  // The command line's globals go before every job's own options, the job files' too.
  for (auto& j : cli_jobs) {
    j.options.insert(j.options.begin(), globals.begin(), globals.end());
    j.own_from = globals.size();
    in.jobs.push_back(std::move(j));
  }
  for (size_t f = 0; f < in.job_files.size(); ++f) {
    auto sections = read_job_file(in.job_files[f]);
    if (!sections) return make_error(sections.error());
    std::vector<Option> file_globals = globals;
    bool first_job = true;
    for (auto& s : *sections) {
      if (is_global(s.name)) {
        file_globals.insert(file_globals.end(), s.options.begin(), s.options.end());
        continue;
      }
      Job j{s.name, s.where, file_globals, file_globals.size(), false};
      j.options.insert(j.options.end(), s.options.begin(), s.options.end());
      // fio separates job files by a stonewall: the second file's first job waits.
      j.file_stonewall = first_job && f > 0;
      first_job = false;
      in.jobs.push_back(std::move(j));
    }
  }
  // --section NAME (repeatable): only those jobs run, as fio's skip_this_section.
  std::set<std::string> sections;
  for (const auto& fl : in.flags) {
    if (fl.name == "section") sections.insert(fl.value);
  }
  if (!sections.empty()) {
    std::erase_if(in.jobs, [&](const Job& j) { return !sections.count(j.name); });
  }
  // Substitute every value now, so a message names the value as fio would use it.
  for (auto& j : in.jobs) {
    for (auto& o : j.options) {
      if (!o.value) continue;
      std::vector<std::string> unset;
      auto v = expand(*o.value, env, &unset);
      if (!v) return make_error(o.where + ": " + o.key + "=" + excerpt(*o.value) + ": " + v.error());
      for (const auto& name : unset) {
        in.notes.push_back(o.where + ": " + o.key + "=" + excerpt(*o.value) + ": ${" + excerpt(name) +
                           "} is not set in the environment: it read as nothing, as fio reads it");
      }
      o.value = *v;
    }
  }
  return in;
}

}  // namespace diskprobe::profiles::fio
