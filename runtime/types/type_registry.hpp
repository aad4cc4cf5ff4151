// The process's one storage-type registry: the built-in types and every type a loaded
// plugin brings. It owns the descriptors (a plugin's library stays loaded while its
// types are registered, which is for the life of the process) and gives each type its id:
// built-in types keep their fixed ids, a plugin's types get ids from kFirstPluginId on, in
// registration order. Lookups are safe from any thread while plugins register.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "switchyard/status.hpp"
#include "switchyard/types.hpp"

namespace sy::types {

/// The first id given to a plugin's type; GGUF's ids are below 40 and the core's below 2000.
inline constexpr uint32_t kFirstPluginId = 0x10000;

/// One registered type. Addresses are stable for the life of the registry.
struct Entry {
  StorageTypeInfo info{};     ///< info.name points into `name`
  StorageTypeDesc desc{};     ///< desc.name and desc.repack_to point into the strings below
  std::string name;           ///< canonical: "Q4_K" for built-in types, "<plugin>.<NAME>" otherwise
  std::string bare;           ///< the name the provider gave ("Q4_K", "W3_G128")
  std::string provider;       ///< "gguf", "core" or the plugin's name
  std::string repack_to;      ///< canonical name of the repack target, or empty
  StorageType repack_type{};  ///< its id, when repack_to is set
  bool builtin = false;       ///< the runtime's own type (provider "gguf" or "core")
};

class TypeRegistry {
 public:
  /// A registry holding the built-in types.
  TypeRegistry();

  /// The registry of this process (built-in types registered on first use).
  static TypeRegistry& process();

  /// Registers the types of `provider` (a plugin's name). Every descriptor is checked
  /// (name, geometry, dequantize_row, repack target) before any is added, so a refused
  /// table adds nothing. `keep_alive` (the plugin's library) is held for as long as the
  /// registry lives. The same provider declaring the same types again is a no-op (the
  /// first library's functions stay); declaring others is an error.
  Status add(const std::string& provider, const StorageTypeTable& table, std::shared_ptr<const void> keep_alive);

  [[nodiscard]] const Entry* by_id(uint32_t id) const noexcept;
  /// Case-insensitive; a canonical name ("gptq.W3_G128", "Q4_K") or a bare name that only
  /// one type has. `ambiguous` (optional) receives the candidates when several have it.
  [[nodiscard]] const Entry* by_name(std::string_view name, std::vector<const Entry*>* ambiguous = nullptr) const;
  [[nodiscard]] size_t size() const noexcept;
  /// Entry i in registration order (built-in types first, in id order).
  [[nodiscard]] const Entry* at(size_t i) const noexcept;

 private:
  const Entry* find_name(std::string_view name, std::vector<const Entry*>* ambiguous) const;  // mu_ held
  Entry& emplace(uint32_t id, const std::string& provider, const StorageTypeDesc& d, bool in_gguf, bool builtin);

  // Built-in ids are looked up without a lock: they are written once, in the constructor.
  static constexpr uint32_t kFastIds = 2048;
  std::array<const Entry*, kFastIds> fast_{};
  mutable std::shared_mutex mu_;
  std::deque<Entry> entries_;
  std::map<uint32_t, const Entry*> ids_;
  std::multimap<std::string, const Entry*, std::less<>> names_;  ///< upper-cased bare and canonical names
  /// What a provider declared, kept as owned values (its library's strings are not ours).
  struct Declared {
    std::string name, repack_to;
    uint32_t block_size, block_bytes, group_size, flags;
    bool quantize;
    bool operator==(const Declared&) const = default;
  };
  static Declared declared(const StorageTypeDesc& d);
  static bool same_types(const std::vector<Declared>& had, const StorageTypeTable& table);
  std::map<std::string, std::vector<Declared>, std::less<>> tables_;  ///< provider -> its declared types
  std::vector<std::shared_ptr<const void>> keep_;
  uint32_t next_id_ = kFirstPluginId;
};

}  // namespace sy::types
