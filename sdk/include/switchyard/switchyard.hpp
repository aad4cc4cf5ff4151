// Convenience header: the whole plugin SDK.
#pragma once

#include "switchyard/backend.hpp"
#include "switchyard/component.hpp"
#include "switchyard/cpu.hpp"
#include "switchyard/format.hpp"
#include "switchyard/metadata.hpp"
#include "switchyard/ops.hpp"
#include "switchyard/params.hpp"
#include "switchyard/plugin.hpp"
#include "switchyard/quant.hpp"
#include "switchyard/sampler.hpp"
#include "switchyard/status.hpp"
#include "switchyard/storage.hpp"
#include "switchyard/tensor.hpp"
#include "switchyard/types.hpp"
