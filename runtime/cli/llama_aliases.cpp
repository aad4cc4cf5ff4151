#include "cli/llama_aliases.hpp"

namespace sy::cli {

const std::vector<std::pair<std::string_view, std::string_view>>& llama_short_aliases() {
  static const std::vector<std::pair<std::string_view, std::string_view>> table{
      {"-ngl", "--n-gpu-layers"},   {"-ncmoe", "--n-cpu-moe"},    {"-cmoe", "--cpu-moe"},
      {"-ot", "--override-tensor"}, {"-fa", "--flash-attn"},      {"-ctk", "--cache-type-k"},
      {"-ctv", "--cache-type-v"},   {"-sys", "--system-prompt"},  {"-sysf", "--system-prompt-file"},
      {"-dev", "--device"},         {"-ub", "--ubatch-size"},     {"-np", "--parallel"},
  };
  return table;
}

std::vector<std::string> expand_llama_aliases(int argc, const char* const* argv,
                                              const std::function<bool(const std::string&)>& takes_value) {
  std::vector<std::string> out;
  bool rest = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i == 0 || rest || (i > 1 && takes_value && takes_value(out.back()))) {
      out.push_back(std::move(a));
      continue;
    }
    if (a == "--") rest = true;
    for (const auto& [shortname, longname] : llama_short_aliases()) {
      if (a == shortname) {
        a = longname;
        break;
      }
      if (a.size() > shortname.size() && a.compare(0, shortname.size(), shortname) == 0 && a[shortname.size()] == '=') {
        a = std::string(longname) + a.substr(shortname.size());
        break;
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace sy::cli
