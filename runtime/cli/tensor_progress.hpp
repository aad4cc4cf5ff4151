// Progress of the tools that write GGUF tensors (quantize, convert, gguf split/merge): a bar
// on a terminal, a plain line per tensor otherwise (logs, CI).
#pragma once

#include <cstdint>
#include <string>

#include "gguf_tools/rewrite.hpp"

namespace sy::cli {

/// "12.50 MiB".
std::string mib(uint64_t bytes);

/// Reports to standard error. `stop_after` > 0: the test hook SWITCHYARD_TEST_STOP_AFTER_TENSORS,
/// which stops the process (SIGSTOP) after that many tensors so a test can kill it midway.
gguf_tools::Progress tensor_progress(int64_t stop_after = 0);

/// The value of SWITCHYARD_TEST_STOP_AFTER_TENSORS, or 0.
int64_t stop_after_from_env();

}  // namespace sy::cli
