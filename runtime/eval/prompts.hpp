// The prompt set of an eval: JSON Lines, one prompt per line, either raw text
// {"prompt": "Once upon a time"} or a chat {"messages": [{"role": "user", "content": "..."}]}
// rendered with the model's chat template. An optional "id" names it in the report.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "chat/prompt.hpp"
#include "switchyard/status.hpp"

namespace sy::eval {

struct Prompt {
  std::string id;                      ///< from the line, else "line N"
  std::string text;                    ///< raw prompts
  std::vector<chat::Message> messages; ///< chat prompts (text empty)
  [[nodiscard]] bool chat() const { return !messages.empty(); }
};

/// Reads a JSONL prompt set; errors name the file and line. Blank lines are skipped.
Result<std::vector<Prompt>> load_prompts(const std::filesystem::path& file);

/// The same from text.
Result<std::vector<Prompt>> parse_prompts(const std::string& text, const std::string& name);

}  // namespace sy::eval
