#include "server/openai/output.hpp"

#include "server/parse/stream_parser.hpp"

namespace sy::server::openai {
namespace {

class Plain final : public OutputShaper {
 public:
  std::vector<OutputDelta> push(std::string_view text) override {
    if (text.empty()) return {};
    OutputDelta d;
    d.content = std::string(text);
    return {d};
  }
  std::vector<OutputDelta> finish() override { return {}; }
};

class Chat final : public OutputShaper {
 public:
  explicit Chat(ParseOptions o) : parser_(std::move(o)) {}
  std::vector<OutputDelta> push(std::string_view text) override { return convert(parser_.push(text)); }
  std::vector<OutputDelta> finish() override { return convert(parser_.finish()); }
  [[nodiscard]] bool has_tool_calls() const override { return calls_; }

 private:
  std::vector<OutputDelta> convert(std::vector<ParseEvent> events) {
    std::vector<OutputDelta> out;
    for (auto& e : events) {
      OutputDelta d;
      switch (e.kind) {
        case EventKind::content: d.content = std::move(e.text); break;
        case EventKind::reasoning: d.reasoning = std::move(e.text); break;
        case EventKind::tool_call_start:
          calls_ = true;
          d.tool_index = static_cast<int>(e.index);
          d.tool_id = std::move(e.id);
          d.tool_name = std::move(e.name);
          break;
        case EventKind::tool_call_arguments:
          d.tool_index = static_cast<int>(e.index);
          d.tool_arguments = std::move(e.text);
          break;
      }
      out.push_back(std::move(d));
    }
    return out;
  }
  OutputParser parser_;
  bool calls_ = false;
};

}  // namespace

std::unique_ptr<OutputShaper> plain_output() { return std::make_unique<Plain>(); }

std::unique_ptr<OutputShaper> chat_output(const ChatOutputOptions& o) {
  ParseOptions p;
  p.tool_format = detect_tool_format(o.template_source);
  p.parse_tool_calls = o.tools.is_array() && !o.tools.empty();
  p.prompt_opens_reasoning = prompt_opens_reasoning(o.prompt_text);
  p.tool_call_id_prefix = o.call_id_prefix;
  p.tools = o.tools;
  return std::make_unique<Chat>(std::move(p));
}

}  // namespace sy::server::openai
