#include "server/openai/output.hpp"

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

}  // namespace

std::unique_ptr<OutputShaper> plain_output() { return std::make_unique<Plain>(); }

std::unique_ptr<OutputShaper> chat_output(const std::string&, bool) { return std::make_unique<Plain>(); }

}  // namespace sy::server::openai
