#include "serving/prefill_budget.hpp"

#include <algorithm>
#include <cmath>

namespace sy::serving {
namespace {

// Weight of the newest step in the running estimates: a few steps follow a change of load
// (a new stream, a longer context) without one odd step swinging the cap.
constexpr double kAlpha = 0.25;

double blend(double old, double sample, bool have) { return have ? old + kAlpha * (sample - old) : sample; }

}  // namespace

void PrefillBudget::observe(int64_t decode, int64_t prompt, double seconds) {
  if (!(seconds >= 0) || decode < 0 || prompt < 0) return;
  if (prompt == 0) {
    if (decode == 0) return;
    // On a CPU a decode step costs its weight reads more than its tokens: the step's time,
    // not a time per token, is what the next step's decode part will take.
    decode_step_s_ = blend(decode_step_s_, seconds, have_decode_);
    have_decode_ = true;
    return;
  }
  const double base = decode > 0 && have_decode_ ? decode_step_s_ : 0.0;
  per_prompt_s_ = blend(per_prompt_s_, std::max(0.0, seconds - base) / static_cast<double>(prompt), have_prompt_);
  have_prompt_ = true;
}

int64_t PrefillBudget::cap(int64_t decode, int64_t limit) const {
  if (target_s_ <= 0 || decode == 0 || limit <= floor_) return limit;
  // The first prompt chunk beside running streams is the floor: its time teaches the rate.
  if (!have_prompt_ || per_prompt_s_ <= 0) return floor_;
  const double room = target_s_ - (have_decode_ ? decode_step_s_ : 0.0);
  const double n = room / per_prompt_s_;
  if (!(n >= static_cast<double>(floor_))) return floor_;
  return n >= static_cast<double>(limit) ? limit : static_cast<int64_t>(n);
}

}  // namespace sy::serving
