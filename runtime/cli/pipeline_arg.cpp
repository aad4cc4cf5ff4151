#include "cli/pipeline_arg.hpp"

#include <filesystem>
#include <iostream>

#include "pipeline/validate.hpp"

namespace sy::cli {

std::optional<pipeline::Pipeline> pipeline_from_args(const std::string& command, const std::string& pipeline_file,
                                                     const std::string& model, const std::vector<std::string>& sets) {
  if (pipeline_file.empty() && model.empty()) {
    std::cerr << "switchyard " << command << ": give a pipeline (-p FILE) or a model (-m FILE)\n";
    return std::nullopt;
  }
  // The built-in default is what `llama-cli -m` would run: the CPU and every default. The
  // model path is set below, not written into the YAML: a path need not be valid UTF-8,
  // which YAML text must be.
  const auto lr = pipeline_file.empty()
                      ? pipeline::load_pipeline_text("model: { path: model-given-with-m }\nbackends: [ { plugin: cpu } ]\n",
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
