// Where matmul's converted activations live in the node's scratch (NodeRecord::scratch):
// the prep shader (act_quant.comp) writes them, the matmul shaders read them. One column
// (an activation row of k elements) after another, `act_col_bytes(k)` apart:
//
//   ACT_Q8_0  k int8 levels, then k / 32 f32 scales (each the f16 value the CPU stores)
//   ACT_Q8_K  k int8 levels, then k / 256 f32 scales (the CPU's f32 d); the 16-element
//             sums the CPU stores with them are summed from the levels where needed
//   ACT_BF16  k f32 values, each rounded to bf16
//
// kernels/matmul.cpp sizes the scratch with the same formulas (act_bytes()).
#define ACT_NONE 0
#define ACT_Q8_0 1
#define ACT_Q8_K 2
#define ACT_BF16 3

uint act_col_bytes(uint k) {
#if ACT == ACT_Q8_0
  return k + k / 8;
#elif ACT == ACT_Q8_K
  return k + k / 64;
#elif ACT == ACT_BF16
  return 4 * k;
#else
  return 0;
#endif
}

/// Byte address of column c's data.
uint64_t act_col(uint c, uint k) { return pc.node.scratch + uint64_t(c) * uint64_t(act_col_bytes(k)); }
