#include "planner/model_desc.hpp"

namespace sy::planner {

bool is_routed_expert(const std::string& name) { return name.find("_exps.") != std::string::npos; }

int64_t layer_of(const std::string& name) { return model::block_index(name); }

}  // namespace sy::planner
