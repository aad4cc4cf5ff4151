// The plugin descriptor: the one symbol a Switchyard plugin library exports.
//
//   const sy::PluginDescriptor* my_plugin() noexcept { static const sy::PluginDescriptor d{...}; return &d; }
//   SWITCHYARD_PLUGIN(my_plugin)
//
// The build writes a JSON manifest beside the library from this same descriptor
// (switchyard_add_plugin() in CMake), so the runtime can list and validate without loading.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/dll/alias.hpp>

#include "switchyard/component.hpp"
#include "switchyard/params.hpp"
#include "switchyard/status.hpp"
#include "switchyard/types.hpp"

namespace sy {

/// ABI of this SDK. A plugin built against another major version is refused; a newer
/// minor version of the runtime accepts plugins of older minors.
/// 3.3: storage type Q6_K_X16 (1036), Q6_K with 16 rows interleaved for the CPU kernels.
/// 3.2: StorageTypeDesc::quantize_row_weighted (importance-weighted quantization) appended;
/// a 3.1 type table is read up to its own fields.
/// 3.1: storage types are registered (types.hpp): a plugin may export a type table, and
/// receives the runtime's host services at load (SWITCHYARD_PLUGIN exports the receiver);
/// the SDK's storage and reference-conversion functions answer from the runtime's registry.
/// 3.0: the device contract for GPUs (issue 16): Device::supports takes the whole node,
/// allocate takes a BufferKind, execution and copies are queued with events, and
/// DeviceInfo says who reads which memory; the Device and Buffer vtables changed.
/// 2.0: ComponentDesc::traits and ParamSpec::pattern, pattern_hint and token_ids change
/// both structs' layout, which a plugin built against 1.x would read wrongly (issue 15).
/// 1.1 added the op IR (graph.hpp), more ops and status codes, SamplerContext::pieces.
inline constexpr uint32_t kAbiMajor = 3;
inline constexpr uint32_t kAbiMinor = 3;

/// The C++ standard library ABI the SDK types (std::string, std::vector) depend on.
/// Plugins and runtime must agree on it, since those types cross the boundary.
#if defined(_LIBCPP_VERSION)
inline constexpr const char* kAbiTag = "libc++";
#elif defined(_GLIBCXX_USE_CXX11_ABI) && _GLIBCXX_USE_CXX11_ABI
inline constexpr const char* kAbiTag = "libstdc++-cxx11";
#else
inline constexpr const char* kAbiTag = "libstdc++-legacy";
#endif

/// Creates a component from validated parameters. Must not throw; report failure in the Result.
using ComponentFactory = Result<std::unique_ptr<Component>> (*)(const ParamMap& params) noexcept;

/// One component a plugin provides.
struct ComponentDesc {
  ComponentKind kind = ComponentKind::sampler;
  std::string name;                        ///< unique per kind across all plugins: "gguf", "cpu", "top_p"
  std::string version;                     ///< the component's own version ("1.0.0")
  int rank = 0;                            ///< preference when the runtime chooses automatically; higher wins
  std::string summary;                     ///< one line for `switchyard plugins`
  std::vector<std::string> cpu_features;   ///< CPU features required to run ("avx2", "avx512f")
  std::vector<ParamSpec> params;           ///< the typed parameter schema
  ComponentFactory factory = nullptr;
  /// Declared properties the runtime checks pipelines with; open-ended, unknown ones are
  /// ignored. "terminal": a sampler that picks the token (sets CandidateList::selected),
  /// so it must end a sampling chain.
  std::vector<std::string> traits;
};

/// The trait of a sampler that picks the token.
inline constexpr const char* kTraitTerminal = "terminal";
/// A backend's trait per storage type it computes with kernels of its own: "native:Q8_0".
/// The loader's conversion plan prefers those types (docs/plugins.md); a backend that
/// declares none is judged by its devices' supports() alone; the bare prefix alone says
/// "none" explicitly (a backend without kernels yet).
inline constexpr const char* kTraitNativePrefix = "native:";
/// A backend's trait when it computes every registered type through a generic kernel that
/// dequantizes a few blocks at a time (the CPU).
inline constexpr const char* kTraitGenericKernel = "generic_kernel";

/// Everything a plugin library declares about itself. The ABI version comes first, in every
/// ABI: the registry reads those 8 bytes alone and nothing more of a plugin whose version
/// it cannot read.
struct PluginDescriptor {
  uint32_t abi_major = kAbiMajor;
  uint32_t abi_minor = kAbiMinor;
  std::string abi_tag = kAbiTag;
  std::string name;      ///< plugin name: "samplers", "cpu"
  std::string version;   ///< plugin version ("0.1.0")
  std::string summary;   ///< one line
  std::vector<ComponentDesc> components;
};

static_assert(offsetof(PluginDescriptor, abi_major) == 0 && offsetof(PluginDescriptor, abi_minor) == 4,
              "the ABI version is the descriptor's stable prefix");

/// Signature of the exported descriptor function.
using PluginEntryFn = const PluginDescriptor*() noexcept;

/// Name of the exported alias the registry looks up.
inline constexpr const char* kPluginSymbol = "switchyard_plugin";

/// Wraps a factory body so that no exception escapes: `return sy::guard_factory([&] {...});`.
/// An escaped exception becomes an internal error naming its what().
template <class F>
Result<std::unique_ptr<Component>> guard_factory(F&& make) noexcept {
  try {
    return make();
  } catch (const std::exception& e) {
    return error::internal(std::string("component factory threw: ") + e.what());
  } catch (...) {
    return error::internal("component factory threw an unknown exception");
  }
}

}  // namespace sy

/// Exports `fn` (a `const sy::PluginDescriptor* fn() noexcept`) as the plugin's descriptor,
/// and the SDK's receiver of the host services.
#define SWITCHYARD_PLUGIN(fn)                  \
  BOOST_DLL_ALIAS(fn, switchyard_plugin)       \
  BOOST_DLL_ALIAS(sy::detail::attach_host, switchyard_attach)
