#include "model/source.hpp"

#include "log/log.hpp"

namespace sy::model {

Result<OpenedSource> open_source(registry::Registry& reg, const std::filesystem::path& path, const std::string& format) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec) && !std::filesystem::is_directory(path, ec))
    return error::not_found("model file " + path.string() + " does not exist");
  std::string name = format;
  if (name.empty()) {
    auto choice = reg.choose_format(path);
    if (!choice) return choice.status();
    name = reg.manifest(*choice->component).name;
  }
  OpenedSource o;
  o.format_name = name;
  auto fmt = reg.create_format(name, {});
  if (!fmt) return fmt.status();
  o.format = std::move(*fmt);
  auto src = o.format->open(path);
  if (!src) return src.status();
  o.source = std::move(*src);
  // A format that leaves tensors out (a vision tower, prediction heads) says so here.
  if (auto note = o.source->metadata().get_string("general.source.skipped"))
    log::get("model")->info("{}: {}", path.string(), *note);
  return o;
}

}  // namespace sy::model
