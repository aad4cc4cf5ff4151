// One spdlog logger per component ("registry", "pipeline", "cli", ...), all writing to
// the same sinks: stderr, plus a file when --log-file is given.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/logger.h>

#include "switchyard/status.hpp"

namespace sy::log {

/// The logger of a component, created on first use with the current sinks and level.
std::shared_ptr<spdlog::logger> get(const std::string& component);

/// Sets the level of every logger ("trace", "debug", "info", "warn", "error", "off").
Status set_level(std::string_view level);

/// Adds a file sink (appending) to every logger, present and future.
Status add_file(const std::string& path);

}  // namespace sy::log
