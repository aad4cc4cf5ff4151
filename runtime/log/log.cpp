#include "log/log.hpp"

#include <mutex>
#include <vector>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "switchyard/utf8.hpp"

namespace sy::log {
namespace {

// Log lines quote models' strings, which need not be UTF-8: each sink gets the line with such
// bytes escaped as \xNN (sy::escape_invalid_utf8), the same as inspect prints them.
class EscapingSink final : public spdlog::sinks::sink {
 public:
  explicit EscapingSink(spdlog::sink_ptr inner) : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    const std::string_view text(msg.payload.data(), msg.payload.size());
    if (!sy::first_invalid_utf8(text)) return inner_->log(msg);
    const std::string escaped = sy::escape_invalid_utf8(text);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    inner_->log(copy);
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> f) override { inner_->set_formatter(std::move(f)); }

 private:
  spdlog::sink_ptr inner_;
};

// The sink list and level live in spdlog's registry scope: this struct is only reached
// through state(), and every logger is registered with spdlog.
struct State {
  std::mutex mutex;
  std::vector<spdlog::sink_ptr> sinks{
      std::make_shared<EscapingSink>(std::make_shared<spdlog::sinks::stderr_color_sink_mt>())};
  spdlog::level::level_enum level = spdlog::level::warn;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

std::shared_ptr<spdlog::logger> get(const std::string& component) {
  auto& s = state();
  std::lock_guard lock(s.mutex);
  if (auto existing = spdlog::get(component)) return existing;
  auto logger = std::make_shared<spdlog::logger>(component, s.sinks.begin(), s.sinks.end());
  logger->set_level(s.level);
  logger->set_pattern("[%H:%M:%S.%e] [%n] [%^%l%$] %v");
  spdlog::register_logger(logger);
  return logger;
}

Status set_level(std::string_view level) {
  const auto lvl = spdlog::level::from_str(std::string(level));
  if (lvl == spdlog::level::off && level != "off")
    return error::invalid_argument("unknown log level '" + std::string(level) +
                                   "'; use trace, debug, info, warn, error or off");
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.level = lvl;
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->set_level(lvl); });
  return Status::ok();
}

Status add_file(const std::string& path) {
  spdlog::sink_ptr sink;
  try {
    sink = std::make_shared<EscapingSink>(std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/false));
  } catch (const spdlog::spdlog_ex& e) {
    return error::io_error("cannot open log file " + path + ": " + e.what());
  }
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.sinks.push_back(sink);
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& l) { l->sinks().push_back(sink); });
  return Status::ok();
}

}  // namespace sy::log
