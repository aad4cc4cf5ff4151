// Plugin manifests: the JSON written beside each plugin library at build time, from the
// library's own descriptor, so the runtime can list and validate without loading code.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "switchyard/params.hpp"
#include "switchyard/plugin.hpp"
#include "switchyard/status.hpp"
#include "switchyard/types.hpp"

namespace sy::registry {

/// Manifest format version written by this build.
inline constexpr int kManifestVersion = 1;

/// A component as the manifest states it (the descriptor minus the factory).
struct ComponentManifest {
  ComponentKind kind = ComponentKind::sampler;
  std::string name;
  std::string version;
  int rank = 0;
  std::string summary;
  std::vector<std::string> cpu_features;
  std::vector<ParamSpec> params;
  std::vector<std::string> traits;  ///< ComponentDesc::traits ("terminal")

  /// True when the component declares `trait`.
  [[nodiscard]] bool has_trait(std::string_view trait) const;
  /// The declared parameter called `name`, or nullptr.
  [[nodiscard]] const ParamSpec* param(std::string_view pname) const;
};

/// A storage type a plugin registers, as the manifest states it (types.hpp).
struct StorageTypeManifest {
  std::string name;  ///< as the plugin declares it ("W3_G128"); registered as "<plugin>.<name>"
  uint32_t block_size = 0;
  uint32_t block_bytes = 0;
  uint32_t group_size = 0;
  bool quantized = false;
  bool quantize = false;     ///< has a quantize_row
  std::string repack_to;     ///< empty when none
  friend bool operator==(const StorageTypeManifest&, const StorageTypeManifest&) = default;
};

/// A whole plugin as the manifest states it.
struct Manifest {
  std::string library;  ///< file name of the library the manifest describes
  uint32_t abi_major = 0;
  uint32_t abi_minor = 0;
  std::string abi_tag;
  std::string name;
  std::string version;
  std::string summary;
  std::vector<ComponentManifest> components;
  std::vector<StorageTypeManifest> storage_types;  ///< "storage_types" (optional in the JSON)
};

/// The manifest a descriptor (and the library's storage-type table, if any) implies, for a
/// library file called `library`.
Manifest manifest_from_descriptor(const PluginDescriptor& d, const std::string& library,
                                  const StorageTypeTable* types = nullptr);

/// JSON form written to disk.
nlohmann::json manifest_to_json(const Manifest& m);

/// JSON form of one component (as it appears in the manifest's "components").
nlohmann::json component_to_json(const ComponentManifest& c);

/// Parses a manifest; errors name `source` and the offending field.
Result<Manifest> manifest_from_json_text(const std::string& text, const std::string& source);

/// Reads `<library>.json`.
Result<Manifest> read_manifest(const std::filesystem::path& path);

/// Writes a manifest atomically (temporary file + rename), so a failed build never
/// leaves a half-written manifest behind.
Status write_manifest(const Manifest& m, const std::filesystem::path& path);

/// First difference between the manifest on disk and the one the loaded library implies
/// (the library file name is not compared), as a phrase; nullopt when they agree.
std::optional<std::string> manifest_difference(const Manifest& on_disk, const Manifest& from_library);

/// The manifest path for a library: the library path with ".json" appended.
std::filesystem::path manifest_path_for(const std::filesystem::path& library);

}  // namespace sy::registry
