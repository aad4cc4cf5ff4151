#include "eval/prompts.hpp"

#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "util/read_file.hpp"

namespace sy::eval {

Result<std::vector<Prompt>> parse_prompts(const std::string& text, const std::string& name) {
  std::vector<Prompt> out;
  std::set<std::string> ids;
  std::istringstream in(text);
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string at = name + ":" + std::to_string(n) + ": ";
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      return error::invalid_argument(at + "each line must be one JSON object, {\"prompt\": TEXT} or {\"messages\": [...]}");
    Prompt p;
    p.id = "line " + std::to_string(n);
    if (auto it = j.find("id"); it != j.end()) {
      if (!it->is_string() && !it->is_number_integer()) return error::invalid_argument(at + "\"id\" must be a string or an integer");
      p.id = it->is_string() ? it->get<std::string>() : std::to_string(it->get<int64_t>());
    }
    if (!ids.insert(p.id).second) return error::invalid_argument(at + "the id \"" + p.id + "\" is used twice");
    const bool has_prompt = j.contains("prompt"), has_messages = j.contains("messages");
    if (has_prompt == has_messages)
      return error::invalid_argument(at + "give either \"prompt\" (raw text) or \"messages\" (a chat), not " +
                                     (has_prompt ? "both" : "neither"));
    if (has_prompt) {
      if (!j["prompt"].is_string() || j["prompt"].get<std::string>().empty())
        return error::invalid_argument(at + "\"prompt\" must be a non-empty string");
      p.text = j["prompt"].get<std::string>();
    } else {
      const auto& m = j["messages"];
      if (!m.is_array() || m.empty()) return error::invalid_argument(at + "\"messages\" must be a non-empty list");
      for (const auto& msg : m) {
        if (!msg.is_object() || !msg.contains("role") || !msg["role"].is_string() || !msg.contains("content") ||
            !msg["content"].is_string())
          return error::invalid_argument(at + "each message is {\"role\": TEXT, \"content\": TEXT}");
        p.messages.push_back({msg["role"].get<std::string>(), msg["content"].get<std::string>()});
      }
    }
    for (const auto& [k, v] : j.items())
      if (k != "id" && k != "prompt" && k != "messages")
        return error::invalid_argument(at + "unknown key \"" + k + "\"; a prompt line has id, prompt or messages");
    out.push_back(std::move(p));
  }
  if (out.empty()) return error::invalid_argument(name + " holds no prompts");
  return out;
}

Result<std::vector<Prompt>> load_prompts(const std::filesystem::path& file) {
  auto t = util::read_file(file, "the prompt set");
  if (!t) return t.status();
  return parse_prompts(*t, file.string());
}

}  // namespace sy::eval
