#include "planner/describe.hpp"

#include "model/architecture.hpp"
#include "model/source.hpp"

namespace sy::planner {

Result<ModelDesc> describe_file(registry::Registry& reg, const std::filesystem::path& path, const std::string& format) {
  auto opened = model::open_source(reg, path, format);
  if (!opened) return opened.status();
  return describe_source(*opened->source, path);
}

Result<ModelDesc> describe_source(const ModelSource& src, const std::filesystem::path& path) {
  auto hp = model::read_hparams(src.metadata(), src.tensors());
  if (!hp) return error::invalid_argument(path.string() + ": " + hp.status().message());
  if (auto st = model::check_layout(*hp, src.tensors()); !st)
    return Status(st.code(), path.string() + ": " + st.message());
  ModelDesc m;
  m.name = path.filename().string();
  m.hp = std::move(*hp);
  m.tensors.assign(src.tensors().begin(), src.tensors().end());
  return m;
}

}  // namespace sy::planner
