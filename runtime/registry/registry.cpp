#include "registry/registry.hpp"

#include <algorithm>

#include "log/log.hpp"
#include "types/host.hpp"
#include "types/type_registry.hpp"
#include "switchyard/cpu.hpp"

namespace sy::registry {
namespace fs = std::filesystem;

namespace {
std::string label(ComponentKind kind, std::string_view name) {
  return std::string(component_kind_name(kind)) + " '" + std::string(name) + "'";
}
}  // namespace

void ComponentDeleter::operator()(Component* c) const noexcept {
  delete c;  // runs the plugin's destructor while its code is still mapped
}

std::optional<std::string> abi_incompatibility(uint32_t major, uint32_t minor, const std::string& tag) {
  if (auto why = abi_version_incompatibility(major, minor)) return why;
  if (tag != kAbiTag)
    return "was built with C++ library ABI '" + tag + "', but this Switchyard uses '" + std::string(kAbiTag) +
           "'; rebuild it with the same compiler settings";
  return std::nullopt;
}

bool looks_like_library(const fs::path& p) {
  const auto ext = p.extension().string();
  return ext == ".so" || ext == ".dylib" || ext == ".dll";
}

Registry::Registry(std::vector<SearchDir> dirs) : dirs_(std::move(dirs)) {
  for (const auto& d : dirs_) scan_dir(d);
  load_errors_.resize(plugins_.size());
  auto lg = log::get("registry");
  for (const auto& r : refusals_) lg->warn("{}: {}", r.file.string(), r.reason);
  for (const auto& n : notes_) lg->info("{}", n);
}

void Registry::scan_dir(const SearchDir& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir.path, ec)) {
    log::get("registry")->debug("plugin directory {} ({}) does not exist", dir.path.string(), dir.origin);
    return;
  }
  std::vector<fs::path> libs;
  for (const auto& entry : fs::directory_iterator(dir.path, ec))
    if (looks_like_library(entry.path()) && entry.is_regular_file(ec)) libs.push_back(entry.path());
  std::sort(libs.begin(), libs.end());  // discovery order must not depend on the file system
  for (const auto& lib : libs) consider(fs::absolute(lib), dir.origin);
}

void Registry::consider(const fs::path& lib, const std::string& origin) {
  PluginRecord rec{lib, origin, {}, true};
  std::shared_ptr<Library> already_loaded;  // kept when reading the descriptor needed a load
  const fs::path mpath = manifest_path_for(lib);
  std::error_code ec;
  if (fs::exists(mpath, ec)) {
    auto m = read_manifest(mpath);
    if (!m) {
      refusals_.push_back({lib, "its manifest is unusable: " + m.status().message()});
      return;
    }
    rec.manifest = std::move(m.value());
  } else {
    // No manifest: the only way to know what it is, is to load it. This is still within
    // a configured plugin directory; it costs a load and is reported.
    auto loaded = Library::open(lib);
    if (!loaded) {
      // The refusal is printed as "file: reason"; drop the file name the loader put first.
      std::string why = loaded.status().message();
      if (why.rfind(lib.string() + " ", 0) == 0) why.erase(0, lib.string().size() + 1);
      refusals_.push_back({lib, why});
      return;
    }
    rec.manifest = manifest_from_descriptor(loaded.value()->descriptor(), lib.filename().string(), loaded.value()->storage_types());
    rec.has_manifest_file = false;
    already_loaded = std::move(loaded.value());
    notes_.push_back(lib.string() + " has no manifest; it was loaded to read its descriptor");
  }
  if (auto why = abi_incompatibility(rec.manifest.abi_major, rec.manifest.abi_minor, rec.manifest.abi_tag)) {
    refusals_.push_back({lib, "plugin '" + rec.manifest.name + "' " + *why});
    return;
  }
  plugins_.push_back(std::move(rec));
  loaded_.push_back(nullptr);
  opened_.push_back(std::move(already_loaded));
  index(plugins_.size() - 1);
}

void Registry::index(size_t pi) {
  const auto& rec = plugins_[pi];
  const auto features = cpu_features();
  for (size_t ci = 0; ci < rec.manifest.components.size(); ++ci) {
    const auto& c = rec.manifest.components[ci];
    if (const auto* prev = find(c.kind, c.name)) {
      refusals_.push_back({rec.library, label(c.kind, c.name) + " refused: already provided by " +
                                            plugins_[prev->plugin].library.string()});
      continue;
    }
    ComponentRecord cr{pi, ci, true, {}};
    for (const auto& f : c.cpu_features)
      if (std::find(features.begin(), features.end(), f) == features.end()) {
        cr.available = false;
        cr.unavailable_reason = "needs CPU feature " + f + ", which this CPU (or SWITCHYARD_CPU_ISA) does not allow";
        break;
      }
    components_.push_back(std::move(cr));
  }
}

const ComponentRecord* Registry::find(ComponentKind kind, std::string_view name) const {
  for (const auto& c : components_) {
    const auto& m = manifest(c);
    if (m.kind == kind && m.name == name) return &c;
  }
  return nullptr;
}

std::vector<std::string> Registry::names(ComponentKind kind) const {
  std::vector<std::string> out;
  for (const auto& c : components_)
    if (manifest(c).kind == kind) out.push_back(manifest(c).name);
  return out;
}

const ComponentManifest& Registry::manifest(const ComponentRecord& c) const {
  return plugins_[c.plugin].manifest.components[c.component];
}

Choice Registry::choose(ComponentKind kind) const {
  Choice best;
  std::string others;
  for (const auto& c : components_) {
    const auto& m = manifest(c);
    if (m.kind != kind) continue;
    if (!c.available) {
      others += "; skipped '" + m.name + "': " + c.unavailable_reason;
      continue;
    }
    if (!best.component || m.rank > manifest(*best.component).rank) {
      if (best.component)
        others += "; '" + manifest(*best.component).name + "' ranks lower (" +
                  std::to_string(manifest(*best.component).rank) + ")";
      best.component = &c;
    } else {
      others += "; '" + m.name + "' ranks lower (" + std::to_string(m.rank) + ")";
    }
  }
  if (!best.component) {
    best.explanation = "no available " + std::string(component_kind_name(kind)) + " component" + others;
    return best;
  }
  const auto& m = manifest(*best.component);
  best.explanation = "chose " + label(kind, m.name) + " (rank " + std::to_string(m.rank) + ")" + others;
  return best;
}

Result<Choice> Registry::choose_format(const fs::path& path) {
  struct Scored {
    const ComponentRecord* rec;
    int score;
  };
  std::vector<Scored> scored;
  std::string notes;
  for (const auto& c : components_) {
    const auto& m = manifest(c);
    if (m.kind != ComponentKind::format) continue;
    if (!c.available) {
      notes += "; skipped '" + m.name + "': " + c.unavailable_reason;
      continue;
    }
    auto fmt = create_format(m.name, {});
    if (!fmt) {
      notes += "; skipped '" + m.name + "': " + fmt.status().message();
      continue;
    }
    scored.push_back({&c, fmt.value()->probe(path)});
  }
  std::stable_sort(scored.begin(), scored.end(), [&](const Scored& a, const Scored& b) {
    if (a.score != b.score) return a.score > b.score;
    return manifest(*a.rec).rank > manifest(*b.rec).rank;
  });
  std::string scores;
  for (const auto& s : scored)
    scores += (scores.empty() ? "" : ", ") + manifest(*s.rec).name + " " + std::to_string(s.score);
  if (scored.empty() || scored.front().score <= 0)
    return error::unsupported("no installed weight format can read " + path.string() +
                              (scores.empty() ? " (no format plugins are installed)" : " (probe scores: " + scores + ")") +
                              notes);
  Choice c;
  c.component = scored.front().rec;
  const auto& m = manifest(*c.component);
  c.explanation = "chose format '" + m.name + "' for " + path.filename().string() + " (probe scores: " + scores +
                  (scored.size() > 1 && scored[0].score == scored[1].score ? "; tie broken by rank" : "") + ")" + notes;
  return c;
}

bool Registry::is_loaded(size_t pi) const {
  std::lock_guard lock(load_mutex_);
  return pi < loaded_.size() && loaded_[pi] != nullptr;
}

Status Registry::load(size_t pi) {
  std::lock_guard lock(load_mutex_);
  if (pi >= plugins_.size()) return error::invalid_argument("no plugin with index " + std::to_string(pi));
  if (loaded_[pi]) return Status::ok();
  if (!load_errors_[pi].is_ok()) return load_errors_[pi];
  const auto& rec = plugins_[pi];
  // A library without a manifest was opened to list it; it is adopted by the same steps.
  Result<std::shared_ptr<Library>> lib = opened_[pi] ? Result<std::shared_ptr<Library>>(std::move(opened_[pi]))
                                                     : Library::open(rec.library);
  if (!lib) return load_errors_[pi] = lib.status();
  const auto& d = lib.value()->descriptor();
  if (auto why = abi_incompatibility(d.abi_major, d.abi_minor, d.abi_tag))
    return load_errors_[pi] = error::invalid_argument(rec.library.string() + ": plugin '" + d.name + "' " + *why);
  const Manifest actual = manifest_from_descriptor(d, rec.library.filename().string(), lib.value()->storage_types());
  if (auto diff = manifest_difference(rec.manifest, actual))
    return load_errors_[pi] = error::corrupt(rec.library.string() + ": its manifest " +
                                             manifest_path_for(rec.library).string() +
                                             " disagrees with the library's descriptor (" + *diff +
                                             "); rebuild the plugin so the build regenerates the manifest");
  // Types first, then attach: a plugin's first factory may already look its types up.
  if (const auto* table = lib.value()->storage_types())
    if (auto st = types::TypeRegistry::process().add(d.name, *table, lib.value()); !st)
      return load_errors_[pi] = Status(st.code(), rec.library.string() + ": " + st.message());
  lib.value()->attach(types::host_services());
  log::get("registry")->debug("loaded plugin '{}' from {}", d.name, rec.library.string());
  loaded_[pi] = std::move(lib.value());
  return Status::ok();
}

void Registry::load_type_providers() {
  for (size_t i = 0; i < plugins_.size(); ++i)
    if (!plugins_[i].manifest.storage_types.empty()) (void)load(i);
}

Result<Owned<Component>> Registry::create(ComponentKind kind, std::string_view name, const ParamMap& params) {
  const auto* c = find(kind, name);
  if (!c) return error::not_found("no " + label(kind, name) + " is installed");
  if (!c->available) return error::unavailable(label(kind, name) + " is unavailable: " + c->unavailable_reason);
  if (auto st = load(c->plugin); !st) return st;
  std::shared_ptr<Library> lib;
  {
    std::lock_guard lock(load_mutex_);
    lib = loaded_[c->plugin];
  }
  const auto& desc = lib->descriptor();
  const ComponentDesc* cd = nullptr;
  for (const auto& x : desc.components)
    if (x.kind == kind && x.name == name) cd = &x;
  if (!cd || !cd->factory) return error::internal(label(kind, name) + " has no factory in " + lib->path().string());
  auto made = cd->factory(params);
  if (!made) return made.status();
  std::unique_ptr<Component> obj = std::move(made.value());
  if (!obj) return error::internal(label(kind, name) + ": the factory returned no object");
  if (obj->kind() != kind)
    return error::internal(label(kind, name) + ": the factory returned a " +
                           std::string(component_kind_name(obj->kind())) + " object");
  return Owned<Component>(obj.release(), ComponentDeleter{std::move(lib)});
}

template <class T>
Result<Owned<T>> Registry::create_as(ComponentKind kind, std::string_view name, const ParamMap& params) {
  auto r = create(kind, name, params);
  if (!r) return r.status();
  auto owned = std::move(r.value());
  ComponentDeleter del = owned.get_deleter();
  return Owned<T>(static_cast<T*>(owned.release()), std::move(del));
}

Result<Owned<WeightFormat>> Registry::create_format(std::string_view name, const ParamMap& params) {
  return create_as<WeightFormat>(ComponentKind::format, name, params);
}
Result<Owned<Backend>> Registry::create_backend(std::string_view name, const ParamMap& params) {
  return create_as<Backend>(ComponentKind::backend, name, params);
}
Result<Owned<Sampler>> Registry::create_sampler(std::string_view name, const ParamMap& params) {
  return create_as<Sampler>(ComponentKind::sampler, name, params);
}

}  // namespace sy::registry
