// The plugin registry: finds plugin libraries, reads their manifests, refuses the ones
// that cannot be used (with a reason), indexes components by kind and name, and loads a
// library only when one of its components is first created.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "registry/library.hpp"
#include "registry/manifest.hpp"
#include "registry/search_path.hpp"
#include "switchyard/backend.hpp"
#include "switchyard/format.hpp"
#include "switchyard/sampler.hpp"

namespace sy::registry {

/// A library that was looked at and refused, or a component of it that was.
struct Refusal {
  std::filesystem::path file;
  std::string reason;  ///< a sentence, e.g. "built for plugin ABI 2.0, but ..."
};

/// A plugin library that was accepted (at least for listing).
struct PluginRecord {
  std::filesystem::path library;
  std::string origin;               ///< which search directory found it
  Manifest manifest;
  bool has_manifest_file = true;    ///< false when the descriptor was read by loading the library
};

/// One usable (kind, name) component.
struct ComponentRecord {
  size_t plugin = 0;      ///< index into plugins()
  size_t component = 0;   ///< index into that manifest's components
  bool available = true;  ///< false when the CPU lacks a required feature
  std::string unavailable_reason;
};

/// Keeps the plugin library loaded while the component lives; deletes the object first.
struct ComponentDeleter {
  std::shared_ptr<Library> library;
  void operator()(Component* c) const noexcept;
};
template <class T>
using Owned = std::unique_ptr<T, ComponentDeleter>;

/// The outcome of an automatic choice, with the reason in words.
struct Choice {
  const ComponentRecord* component = nullptr;
  std::string explanation;
};

class Registry {
 public:
  /// Scans `dirs` in order. Never fails: problems become refusals.
  explicit Registry(std::vector<SearchDir> dirs);

  /// The directories searched, in order.
  [[nodiscard]] const std::vector<SearchDir>& search_path() const { return dirs_; }
  /// Accepted plugin libraries, in discovery order.
  [[nodiscard]] const std::vector<PluginRecord>& plugins() const { return plugins_; }
  /// Libraries and components that were refused, with reasons.
  [[nodiscard]] const std::vector<Refusal>& refusals() const { return refusals_; }
  /// Notes that are not refusals (a library without a manifest file, ...).
  [[nodiscard]] const std::vector<std::string>& notes() const { return notes_; }

  /// All indexed components (available or not), in discovery order.
  [[nodiscard]] const std::vector<ComponentRecord>& components() const { return components_; }
  /// The component of this kind and name, or nullptr.
  [[nodiscard]] const ComponentRecord* find(ComponentKind kind, std::string_view name) const;
  /// Names of the components of a kind, in discovery order.
  [[nodiscard]] std::vector<std::string> names(ComponentKind kind) const;
  /// The manifest entry of a component.
  [[nodiscard]] const ComponentManifest& manifest(const ComponentRecord& c) const;
  /// The plugin record of a component.
  [[nodiscard]] const PluginRecord& plugin(const ComponentRecord& c) const { return plugins_[c.plugin]; }

  /// Highest-ranked available component of a kind, with an explanation that names the
  /// alternatives and why they lost.
  [[nodiscard]] Choice choose(ComponentKind kind) const;

  /// The best weight format for a file: every available format component is created and
  /// asked to probe(path); the highest score wins, then the higher rank. The explanation
  /// lists every score. Loads format plugins (never a GPU runtime).
  Result<Choice> choose_format(const std::filesystem::path& path);

  /// Loads plugin i (if not yet) and checks its descriptor against its manifest.
  Status load(size_t plugin_index);
  /// True when plugin i has been loaded.
  [[nodiscard]] bool is_loaded(size_t plugin_index) const;

  /// Loads every plugin whose manifest lists storage types, so a model's tensors may use
  /// any installed plugin's types (a format reading another plugin's layout). Plugins that
  /// fail to load are skipped here; their error comes back when one of their components is
  /// created.
  void load_type_providers();

  /// Creates a component from already-validated parameters, loading its library first.
  Result<Owned<Component>> create(ComponentKind kind, std::string_view name, const ParamMap& params);
  Result<Owned<WeightFormat>> create_format(std::string_view name, const ParamMap& params);
  Result<Owned<Backend>> create_backend(std::string_view name, const ParamMap& params);
  Result<Owned<Sampler>> create_sampler(std::string_view name, const ParamMap& params);

 private:
  void scan_dir(const SearchDir& dir);
  void consider(const std::filesystem::path& lib, const std::string& origin);
  void index(size_t plugin_index);
  template <class T>
  Result<Owned<T>> create_as(ComponentKind kind, std::string_view name, const ParamMap& params);

  std::vector<SearchDir> dirs_;
  std::vector<PluginRecord> plugins_;
  std::vector<ComponentRecord> components_;
  std::vector<Refusal> refusals_;
  std::vector<std::string> notes_;

  mutable std::mutex load_mutex_;
  std::vector<std::shared_ptr<Library>> loaded_;  ///< parallel to plugins_, null until loaded
  std::vector<std::shared_ptr<Library>> opened_;  ///< opened to read a missing manifest, not yet loaded
  std::vector<Status> load_errors_;               ///< parallel to plugins_
};

/// Checks the ABI a plugin declares against this runtime's; nullopt when compatible.
std::optional<std::string> abi_incompatibility(uint32_t major, uint32_t minor, const std::string& tag);

/// True for file names the registry treats as shared libraries (.so, .dylib, .dll).
bool looks_like_library(const std::filesystem::path& p);

}  // namespace sy::registry
