// Turning a conversation into prompt text with the model's chat template, as
// transformers' apply_chat_template does: messages, tools and documents (none), the
// generation prompt flag, and the tokenizer's bos_token / eos_token.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "chat/template.hpp"
#include "switchyard/metadata.hpp"
#include "switchyard/status.hpp"
#include "tokenizer/tokenizer.hpp"

namespace sy::chat {

struct Message {
  std::string role;
  std::string content;
};

/// The chat template to use: `override_file` when given, else the pipeline's
/// `model.chat_template`, else tokenizer_config.json beside `tokenizer_json` (when given),
/// else the GGUF's tokenizer.chat_template. Returns the source and where it came from.
Result<std::pair<std::string, std::string>> find_chat_template(const std::filesystem::path& override_file,
                                                               const std::filesystem::path& pipeline_file,
                                                               const std::filesystem::path& tokenizer_json,
                                                               const Metadata& model_metadata);

/// Renders the conversation with a parsed chat template.
Result<std::string> render_chat(const Template& tmpl, const std::vector<Message>& messages, bool add_generation_prompt,
                                const tok::Tokenizer* tokenizer);

/// Renders an OpenAI-style conversation: `messages` as clients send them (content as text
/// or text parts, assistant tool_calls with JSON-string arguments, tool results), `tools`
/// (null: none) and extra template variables (chat_template_kwargs such as enable_thinking).
/// Text parts are joined by newlines, null content becomes empty text and tool-call
/// arguments are parsed into objects, as templates expect them.
Result<std::string> render_openai_chat(const Template& tmpl, const nlohmann::ordered_json& messages,
                                       const nlohmann::ordered_json& tools, const nlohmann::ordered_json& kwargs,
                                       bool add_generation_prompt, const tok::Tokenizer* tokenizer);

/// Tokens of a rendered chat prompt: special tokens parsed, BOS added unless the template
/// already wrote it.
std::vector<int32_t> tokenize_chat(const tok::Tokenizer& t, const std::string& prompt);

}  // namespace sy::chat
