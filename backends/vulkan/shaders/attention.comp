#version 450
// Paged flash attention: one workgroup per (query head, query token). The token at
// position p of block-table row r sees the keys at positions 0..p of that row; position
// i lives in cache cell table[r][i / block] * block + i % block. Keys go in tiles of 64
// (one per thread) with an online softmax, so no context-sized buffer; each thread owns
// a few of the V dimensions. Scores follow the CPU's dot types: q stays f32 against
// F32/F16 keys, is rounded to bf16 against BF16 keys, and is converted to Q8_0 (its
// act_q8_0, bit for bit) against Q8_0/Q4_0 keys, whose blocks then dot in integers.
// -DINT_DOT=1: those integer dots use VK_KHR_shader_integer_dot_product.
#if defined(INT_DOT)
#include "int_dot.glsl"
#endif
#include "common.glsl"
#include "set_rows_exact.glsl"

#define WG 64
#define TILE WG
#define MAX_DK 1024
#define ACC 8  // V dimensions per thread: head sizes up to WG * ACC = 512
#define NONE (-3.0e38)

layout(local_size_x = WG) in;

shared float qf[MAX_DK];        // q for float keys
shared int qp[MAX_DK / 4];      // q's Q8_0 levels, 4 per int (little-endian bytes)
shared float qd[MAX_DK / 32];   // q's Q8_0 scales (as stored: f16)
shared int qsum[MAX_DK / 32];   // sum of each block's levels (Q4_0 integer dot)
shared float sc[TILE];          // scores, then weights, of the current tile

// std::round (half away from zero) and act_q8_0's clamp.
int to_q8(float v) {
  float r = trunc(v);
  if (abs(v - r) >= 0.5) r += sign(v);
  if (r >= 127.0) return 127;
  if (r <= -128.0) return -128;
  return r == r ? int(r) : 0;
}

uint bf16_round_bits(float f) {
  const uint u = floatBitsToUint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

int ld_i8(uint64_t a) { return bitfieldExtract(int(ld_u8(a)), 0, 8); }
// Four bytes at a 2-aligned address (blocks of 34 and 18 bytes are only 2-aligned).
int ld_4x8(uint64_t a) { return int(ld_u16(a) | (ld_u16(a + 2ul) << 16)); }

// q's Q8_0 conversion, as the CPU's act_q8_0: d = amax / 127, levels round(x / d).
void quantize_q(int dk, int tid) {
  for (int b = tid; b < dk / 32; b += WG) {
    float amax = 0.0;
    for (int j = 0; j < 32; ++j) amax = max(amax, abs(qf[b * 32 + j]));
    const float d = div_rn(amax, 127.0);
    const float id = d != 0.0 ? div_rn(1.0, d) : 0.0;
    qd[b] = f16_round(d);
    int s = 0;
    for (int c = 0; c < 8; ++c) {
      int packed = 0;
      for (int j = 0; j < 4; ++j) {
        precise float v = qf[b * 32 + c * 4 + j] * id;
        const int l = to_q8(v);
        s += l;
        packed |= (l & 0xff) << (8 * j);
      }
      qp[b * 8 + c] = packed;
    }
    qsum[b] = s;
  }
}

int q_level(int j) { return bitfieldExtract(qp[j >> 2], 8 * (j & 3), 8); }

float score(uint kt, uint64_t k, int dk) {
  float s = 0.0;
  if (kt == T_F32) {
    for (int i = 0; i < dk; ++i) s += ld_f32(k + uint64_t(i) * 4ul) * qf[i];
  } else if (kt == T_F16) {
    for (int i = 0; i < dk; ++i) s += ld_f16(k + uint64_t(i) * 2ul) * qf[i];
  } else if (kt == T_BF16) {
    for (int i = 0; i < dk; ++i) s += ld_bf16(k + uint64_t(i) * 2ul) * qf[i];
  } else if (kt == T_Q8_0) {
    for (int b = 0; b < dk / 32; ++b) {
      const uint64_t blk = k + uint64_t(b) * 34ul;
      int isum = 0;
#if defined(INT_DOT)
      for (int c = 0; c < 8; ++c) isum += sdot4(ld_4x8(blk + 2ul + uint64_t(c) * 4ul), qp[b * 8 + c], 0);
#else
      for (int j = 0; j < 32; ++j) isum += ld_i8(blk + 2ul + uint64_t(j)) * q_level(b * 32 + j);
#endif
      precise float t = f16_value(ld_u16(blk)) * qd[b] * float(isum);
      s += t;
    }
  } else {  // Q4_0
    for (int b = 0; b < dk / 32; ++b) {
      const uint64_t blk = k + uint64_t(b) * 18ul;
      int isum = 0;
#if defined(INT_DOT)
      for (int c = 0; c < 4; ++c) {
        const int w = ld_4x8(blk + 2ul + uint64_t(c) * 4ul);
        isum += sdot4(w & 0x0f0f0f0f, qp[b * 8 + c], 0) + sdot4((w >> 4) & 0x0f0f0f0f, qp[b * 8 + 4 + c], 0);
      }
      isum -= 8 * qsum[b];
#else
      for (int j = 0; j < 16; ++j) {
        const int byte = int(ld_u8(blk + 2ul + uint64_t(j)));
        isum += ((byte & 0xf) - 8) * q_level(b * 32 + j) + ((byte >> 4) - 8) * q_level(b * 32 + 16 + j);
      }
#endif
      precise float t = f16_value(ld_u16(blk)) * qd[b] * float(isum);
      s += t;
    }
  }
  return s;
}

float v_elem(uint vt, uint64_t v, int j) {
  if (vt == T_F32) return ld_f32(v + uint64_t(j) * 4ul);
  if (vt == T_F16) return ld_f16(v + uint64_t(j) * 2ul);
  if (vt == T_BF16) return ld_bf16(v + uint64_t(j) * 2ul);
  const int b = j >> 5, i = j & 31;
  if (vt == T_Q8_0) {
    const uint64_t blk = v + uint64_t(b) * 34ul;
    return float(ld_i8(blk + 2ul + uint64_t(i))) * f16_value(ld_u16(blk));
  }
  const uint64_t blk = v + uint64_t(b) * 18ul;
  const int byte = int(ld_u8(blk + 2ul + uint64_t(i & 15)));
  return float((i < 16 ? byte & 0xf : byte >> 4) - 8) * f16_value(ld_u16(blk));
}

void main() {
  const int tid = int(gl_LocalInvocationID.x);
  const int h = int(gl_WorkGroupID.x), tq = int(gl_WorkGroupID.y);
  const int dk = ne(SRC1, 0), kv_heads = ne(SRC1, 1), cells = ne(SRC1, 2);
  const int dv = ne(SRC2, 0);
  const int kvh = h / (ne(SRC0, 1) / kv_heads);
  const uint kt = pc.node.type[SRC1], vt = pc.node.type[SRC2];
  const int bs = pc.node.ip[0];
  const float scale = pc.node.fp[0];
  const int pos = ld_i32(at(SRC3, tq, 0, 0, 0));
  const int row = ld_i32(at(SRC4, tq, 0, 0, 0));
  const int blocks = ne(SRC5, 0);
  // Keys this query sees; none for a row the table lacks (the CPU refuses the node).
  int n = row >= 0 && row < ne(SRC5, 1) && bs > 0 ? min(pos + 1, blocks * bs) : 0;

  for (int i = tid; i < dk; i += WG) {
    const float x = ld_f32(at(SRC0, i, h, tq, 0));
    qf[i] = kt == T_BF16 ? uintBitsToFloat(bf16_round_bits(x) << 16) : x;
  }
  barrier();
  if (kt == T_Q8_0 || kt == T_Q4_0) quantize_q(dk, tid);
  barrier();

  float acc[ACC];
  for (int a = 0; a < ACC; ++a) acc[a] = 0.0;
  float m = NONE, l = 0.0;
  for (int t0 = 0; t0 < n; t0 += TILE) {
    const int cnt = min(TILE, n - t0);
    const int p = t0 + tid;
    float s = NONE;
    if (tid < cnt) {
      const int entry = ld_i32(at(SRC5, p / bs, row, 0, 0));
      const int cell = entry * bs + p % bs;
      // A table entry outside the cache is skipped rather than read.
      if (entry >= 0 && cell < cells) {
        const uint64_t kr = base(SRC1) + uint64_t(int64_t(cell) * nb(SRC1, 2) + int64_t(kvh) * nb(SRC1, 1));
        s = score(kt, kr, dk) * scale;
      }
    }
    sc[tid] = s;
    barrier();
    float tile_max = NONE;
    for (int j = 0; j < cnt; ++j) tile_max = max(tile_max, sc[j]);
    const float m_new = max(m, tile_max);
    const float corr = exp(m - m_new);
    barrier();
    sc[tid] = tid < cnt && s != NONE ? exp(s - m_new) : 0.0;
    barrier();
    l *= corr;
    for (int a = 0; a < ACC; ++a) acc[a] *= corr;
    for (int j = 0; j < cnt; ++j) {
      const float w = sc[j];
      if (w == 0.0) continue;  // uniform: every thread reads the same weight
      l += w;
      const int pj = t0 + j;
      const int cell = ld_i32(at(SRC5, pj / bs, row, 0, 0)) * bs + pj % bs;
      const uint64_t vr = base(SRC2) + uint64_t(int64_t(cell) * nb(SRC2, 2) + int64_t(kvh) * nb(SRC2, 1));
      for (int a = 0; a < ACC; ++a) {
        const int d = tid + a * WG;
        if (d < dv) acc[a] += w * v_elem(vt, vr, d);
      }
    }
    m = m_new;
    barrier();
  }
  const float inv = l > 0.0 ? 1.0 / l : 0.0;  // a query that sees no key yields zeros
  for (int a = 0; a < ACC; ++a) {
    const int d = tid + a * WG;
    if (d < dv) st_f32(at(DST, d, h, tq, 0), acc[a] * inv);
  }
}
