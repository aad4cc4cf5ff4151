// The common base of everything a plugin creates.
#pragma once

#include <cstdint>
#include <string_view>

namespace sy {

/// What a component is for; the pipeline section that uses it follows from it.
enum class ComponentKind : uint32_t { format = 0, backend = 1, sampler = 2 };

/// "format", "backend" or "sampler".
std::string_view component_kind_name(ComponentKind k) noexcept;

/// Base of WeightFormat, Backend and Sampler. Objects are created by a plugin's factory
/// and destroyed through this virtual destructor, inside the plugin that made them; the
/// runtime keeps the library loaded for as long as any object it made is alive.
class Component {
 public:
  virtual ~Component() = default;
  /// The kind this object implements; the runtime checks it before downcasting.
  [[nodiscard]] virtual ComponentKind kind() const noexcept = 0;

 protected:
  Component() = default;
  Component(const Component&) = default;
  Component& operator=(const Component&) = default;
};

}  // namespace sy
