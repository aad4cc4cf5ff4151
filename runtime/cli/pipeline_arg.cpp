#include "cli/pipeline_arg.hpp"

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "pipeline/validate.hpp"

namespace sy::cli {

std::optional<pipeline::Pipeline> pipeline_from_args(const std::string& command, const std::string& pipeline_file,
                                                     const std::string& model, const std::vector<std::string>& sets) {
  if (pipeline_file.empty() && model.empty()) {
    std::cerr << "switchyard " << command << ": give a pipeline (-p FILE) or a model (-m FILE)\n";
    return std::nullopt;
  }
  // The built-in default is what `llama-cli -m` would run: the CPU and every default.
  const auto lr = pipeline_file.empty()
                      ? pipeline::load_pipeline_text("model: { path: " +
                                                         nlohmann::json(std::filesystem::absolute(model).string()).dump() +
                                                         " }\nbackends: [ { plugin: cpu } ]\n",
                                                     "built-in default", sets)
                      : pipeline::load_pipeline(pipeline_file, sets);
  for (const auto& d : lr.diagnostics) std::cerr << pipeline::format_diagnostic(d) << "\n";
  if (!lr.ok()) return std::nullopt;
  pipeline::Pipeline p = lr.pipeline;
  if (!model.empty()) p.model.path = model;
  if (p.model.path.empty()) {
    std::cerr << "switchyard " << command << ": the pipeline names no model; add model.path or pass -m FILE\n";
    return std::nullopt;
  }
  return p;
}

}  // namespace sy::cli
