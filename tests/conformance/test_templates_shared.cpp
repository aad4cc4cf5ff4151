// Chat templates against the shared vectors (Python Jinja2 in transformers' environment):
// every expected string byte for byte, every expected error as an error (with the
// template's own message for raise_exception).
#include <catch2/catch.hpp>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "chat/template.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The vectors' fixed clock: Friday 26 July 2024, 00:00:00.
std::tm fixed_clock() {
  std::tm tm{};
  tm.tm_year = 124;
  tm.tm_mon = 6;
  tm.tm_mday = 26;
  tm.tm_wday = 5;
  tm.tm_yday = 207;
  return tm;
}

}  // namespace

TEST_CASE("templates: every shared case renders exactly as Jinja2 does", "[templates]") {
  const fs::path dir = fs::path(SY_SHARED_DIR) / "templates";
  std::ifstream in(dir / "cases.jsonl");
  sy::chat::RenderOptions opts;
  opts.now = fixed_clock();
  int n = 0, failed = 0;
  for (std::string line; std::getline(in, line);) {
    const auto c = nlohmann::ordered_json::parse(line);
    const std::string id = c["id"];
    auto t = sy::chat::Template::parse(read_all(dir / c["template"].get<std::string>()), c["template"].get<std::string>());
    ++n;
    if (!t) {
      ++failed;
      std::cout << id << ": parse error: " << t.status().message() << "\n";
      continue;
    }
    sy::chat::RenderFailure why;
    auto out = t->render(sy::chat::from_json(c["context"]), opts, &why);
    if (c.value("error", false)) {
      bool ok = !out.has_value();
      if (ok && c.value("error_kind", "") == "raise_exception") ok = why.message == c["message"].get<std::string>();
      if (!ok) {
        ++failed;
        std::cout << id << ": expected an error (" << c.value("error_kind", "") << ": " << c.value("message", "") << "), got "
                  << (out ? "output" : why.message) << "\n";
      }
      continue;
    }
    const std::string want = c["expected"];
    if (!out || *out != want) {
      ++failed;
      if (!out) {
        std::cout << id << ": " << out.status().message() << "\n";
      } else {
        size_t at = 0;
        while (at < want.size() && at < out->size() && want[at] == (*out)[at]) ++at;
        std::cout << id << ": differs at byte " << at << "\n  want " << nlohmann::json(want.substr(at > 40 ? at - 40 : 0, 120)).dump()
                  << "\n  got  " << nlohmann::json(out->substr(at > 40 ? at - 40 : 0, 120)).dump() << "\n";
      }
    }
  }
  CHECK(n == 301);
  CHECK(failed == 0);
}
