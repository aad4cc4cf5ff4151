// A loaded plugin library (Boost.DLL) and its descriptor.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "switchyard/plugin.hpp"
#include "switchyard/status.hpp"
#include "switchyard/types.hpp"

namespace sy::registry {

/// Owns a dlopen'ed plugin. Destroying it unloads the library, so every component it
/// created must be gone first (OwnedComponent keeps a reference for that reason).
class Library {
 public:
  /// Loads `path` (absolute, so no search path of the dynamic loader is consulted) and
  /// reads its descriptor: the ABI version first (the descriptor's stable prefix), and
  /// nothing else of a plugin built for another major or a newer minor. Errors: the file
  /// cannot be loaded, exports no descriptor, or declares an ABI this runtime cannot read
  /// (the message is abi_version_incompatibility()'s, after the path).
  static Result<std::shared_ptr<Library>> open(const std::filesystem::path& path);
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  /// The descriptor the library exports.
  [[nodiscard]] const PluginDescriptor& descriptor() const { return *descriptor_; }
  /// The storage types the library exports (SWITCHYARD_STORAGE_TYPES), or nullptr.
  [[nodiscard]] const StorageTypeTable* storage_types() const { return types_; }
  /// Hands the host services to the library, when it takes them (plugins of ABI 3.1 on).
  void attach(const HostServices& host) const;
  /// The library's path.
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  Library() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const PluginDescriptor* descriptor_ = nullptr;
  const StorageTypeTable* types_ = nullptr;
  std::filesystem::path path_;
};

/// Checks the ABI version a plugin declares against this runtime's; nullopt when this runtime
/// can read its descriptor and tables.
std::optional<std::string> abi_version_incompatibility(uint32_t major, uint32_t minor);

}  // namespace sy::registry
