#include "chat/prompt.hpp"

#include <nlohmann/json.hpp>

#include "util/read_file.hpp"

namespace sy::chat {
namespace {

// Template files are small; a larger one is a wrong path, not a template.
constexpr uint64_t kMaxTemplateFileBytes = uint64_t{16} << 20;

}  // namespace

Result<std::pair<std::string, std::string>> find_chat_template(const std::filesystem::path& override_file,
                                                               const std::filesystem::path& pipeline_file,
                                                               const std::filesystem::path& tokenizer_json,
                                                               const Metadata& md) {
  for (const auto& [p, what] : {std::pair{override_file, "--chat-template"}, std::pair{pipeline_file, "model.chat_template"}})
    if (!p.empty()) {
      auto s = util::read_file(p, what, kMaxTemplateFileBytes);
      if (!s) return s.status();
      return std::make_pair(std::move(*s), p.string());
    }
  if (!tokenizer_json.empty()) {
    const auto cfg = tokenizer_json.parent_path() / "tokenizer_config.json";
    auto text = util::read_optional_file(cfg, "the tokenizer config");
    if (!text) return text.status();
    if (*text) {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(**text);
      } catch (const nlohmann::json::exception& e) {
        return error::corrupt(cfg.string() + " is not valid JSON: " + e.what());
      }
      if (j.is_object() && j.contains("chat_template") && j["chat_template"].is_string())
        return std::make_pair(j["chat_template"].get<std::string>(), cfg.string());
    }
  }
  if (auto t = md.get_string("tokenizer.chat_template")) return std::make_pair(*t, std::string("tokenizer.chat_template"));
  return error::not_found(
      "the model has no chat template (no tokenizer.chat_template); pass one with --chat-template FILE or "
      "model.chat_template in the pipeline");
}

Result<std::string> render_chat(const Template& tmpl, const std::vector<Message>& messages, bool add_generation_prompt,
                                const tok::Tokenizer* tokenizer) {
  List msgs;
  for (const auto& m : messages) {
    Dict d;
    d.set("role", Value::str(m.role));
    d.set("content", Value::str(m.content));
    msgs.push_back(Value::make_dict(std::move(d)));
  }
  Dict ctx;
  ctx.set("messages", Value::make_list(std::move(msgs)));
  ctx.set("tools", Value::none());
  ctx.set("documents", Value::none());
  ctx.set("add_generation_prompt", Value::boolean(add_generation_prompt));
  if (tokenizer) {
    if (tokenizer->bos() >= 0) ctx.set("bos_token", Value::str(tokenizer->piece(tokenizer->bos())));
    if (tokenizer->eos() >= 0) ctx.set("eos_token", Value::str(tokenizer->piece(tokenizer->eos())));
  }
  return tmpl.render(Value::make_dict(std::move(ctx)));
}

Result<std::string> render_openai_chat(const Template& tmpl, const nlohmann::ordered_json& messages,
                                       const nlohmann::ordered_json& tools, const nlohmann::ordered_json& kwargs,
                                       bool add_generation_prompt, const tok::Tokenizer* tokenizer) {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  // Extra variables first: the fixed ones below win over a client's.
  if (kwargs.is_object())
    for (const auto& [k, v] : kwargs.items()) ctx[k] = v;
  nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
  for (auto m : messages) {
    // An assistant turn that only calls tools has null content; templates read it as text.
    if (auto c = m.find("content"); c == m.end() || c->is_null()) m["content"] = "";
    if (auto c = m.find("content"); c != m.end() && c->is_array()) {
      std::string text;
      for (const auto& part : *c)
        if (part.contains("text") && part["text"].is_string()) text += (text.empty() ? "" : "\n") + part["text"].get<std::string>();
      *c = text;
    }
    if (auto calls = m.find("tool_calls"); calls != m.end() && calls->is_array())
      for (auto& call : *calls)
        if (call.contains("function") && call["function"].contains("arguments") && call["function"]["arguments"].is_string()) {
          auto parsed = nlohmann::ordered_json::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
          if (!parsed.is_discarded()) call["function"]["arguments"] = std::move(parsed);
        }
    msgs.push_back(std::move(m));
  }
  ctx["messages"] = std::move(msgs);
  ctx["tools"] = tools.is_array() && !tools.empty() ? tools : nlohmann::ordered_json(nullptr);
  ctx["documents"] = nullptr;
  ctx["add_generation_prompt"] = add_generation_prompt;
  if (tokenizer) {
    if (tokenizer->bos() >= 0) ctx["bos_token"] = tokenizer->piece(tokenizer->bos());
    if (tokenizer->eos() >= 0) ctx["eos_token"] = tokenizer->piece(tokenizer->eos());
  }
  return tmpl.render(from_json(ctx));
}

std::vector<int32_t> tokenize_chat(const tok::Tokenizer& t, const std::string& prompt) {
  const bool has_bos = t.bos() >= 0 && prompt.rfind(t.piece(t.bos()), 0) == 0;
  return t.encode(prompt, !has_bos, true);
}

}  // namespace sy::chat
