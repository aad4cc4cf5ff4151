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
  reg.load_type_providers();
  OpenedSource o;
  o.format_name = name;
  auto fmt = reg.create_format(name, {});
  if (!fmt) return fmt.status();
  o.format = std::move(*fmt);
  auto src = o.format->open(path);
  if (!src) return src.status();
  o.source = std::move(*src);
  if (auto st = check_tensors(*o.source, name, path); !st) return st;
  // A format that leaves tensors out (a vision tower, prediction heads) says so here.
  if (auto note = o.source->metadata().get_string("general.source.skipped"))
    log::get("model")->info("{}: {}", path.string(), *note);
  return o;
}

Status check_tensors(const ModelSource& src, const std::string& format, const std::filesystem::path& path) {
  // Everything downstream trusts a tensor's type id and byte count; a format plugin's
  // mistake stops here, in words, rather than as a wrong read later.
  for (const auto& t : src.tensors()) {
    const auto id = static_cast<uint32_t>(t.type);
    const auto* info = storage_type_info(id);
    if (!info)
      return error::corrupt(path.string() + ": the " + format + " format gave tensor '" + t.name + "' storage type id " +
                            std::to_string(id) + ", which no plugin has registered; the format plugin must register its "
                            "types (SWITCHYARD_STORAGE_TYPES) or is out of date");
    if (!t.shape.empty() && (t.shape[0] < 0 || t.shape[0] % info->block_size != 0))
      return error::corrupt(path.string() + ": the " + format + " format gave tensor '" + t.name + "' rows of " +
                            std::to_string(t.shape[0]) + " elements, not a whole number of " + std::string(info->name) +
                            " blocks (" + std::to_string(info->block_size) + " elements); the format plugin is inconsistent");
    const auto bytes = tensor_bytes(t.type, t.shape);
    if (!bytes || *bytes != t.bytes)
      return error::corrupt(path.string() + ": the " + format + " format gave tensor '" + t.name + "' " +
                            std::to_string(t.bytes) + " bytes, but its shape in " + std::string(info->name) + " needs " +
                            (bytes ? std::to_string(*bytes) : std::string("more than 64 bits")) +
                            "; the format plugin is inconsistent");
  }
  return Status::ok();
}

}  // namespace sy::model
