// Reference dequantization of every GGUF storage type the project reads, from the block
// layouts of the GGUF specification. Products are evaluated in the order the format
// defines them ((d * scale) * q - dmin * m), so results are bit-identical to other
// conforming implementations; this file is built without floating-point contraction.
#include <cstring>
#include <string>

#include "reference/blocks.hpp"
#include "switchyard/quant.hpp"

namespace sy::ref::deq {

using u8 = uint8_t;

static uint16_t rd16(const u8* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
static float h2f(const u8* p) { return fp16_to_fp32(rd16(p)); }

// The 4-bit non-linear grid shared by IQ4_NL and IQ4_XS.
constexpr int8_t kIQ4[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

void q4_0(const u8* b, float* y) {
  const float d = h2f(b);
  const u8* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>((qs[j] & 0xf) - 8) * d;
    y[j + 16] = static_cast<float>((qs[j] >> 4) - 8) * d;
  }
}

void q4_1(const u8* b, float* y) {
  const float d = h2f(b), m = h2f(b + 2);
  const u8* qs = b + 4;
  for (int j = 0; j < 16; ++j) {
    y[j] = static_cast<float>(qs[j] & 0xf) * d + m;
    y[j + 16] = static_cast<float>(qs[j] >> 4) * d + m;
  }
}

void q5_0(const u8* b, float* y) {
  const float d = h2f(b);
  uint32_t qh;
  std::memcpy(&qh, b + 2, 4);
  const u8* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>(((qs[j] & 0xf) | h0) - 16) * d;
    y[j + 16] = static_cast<float>(((qs[j] >> 4) | h1) - 16) * d;
  }
}

void q5_1(const u8* b, float* y) {
  const float d = h2f(b), m = h2f(b + 2);
  uint32_t qh;
  std::memcpy(&qh, b + 4, 4);
  const u8* qs = b + 8;
  for (int j = 0; j < 16; ++j) {
    const int h0 = static_cast<int>(((qh >> j) << 4) & 0x10);
    const int h1 = static_cast<int>((qh >> (j + 12)) & 0x10);
    y[j] = static_cast<float>((qs[j] & 0xf) | h0) * d + m;
    y[j + 16] = static_cast<float>((qs[j] >> 4) | h1) * d + m;
  }
}

void q8_0(const u8* b, float* y) {
  const float d = h2f(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
}

void q8_1(const u8* b, float* y) {
  const float d = h2f(b);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 4);
  for (int j = 0; j < 32; ++j) y[j] = static_cast<float>(qs[j]) * d;
}

void q2_k(const u8* b, float* y) {
  const u8* scales = b;
  const u8* q = b + 16;
  const float d = h2f(b + 80), dmin = h2f(b + 82);
  int is = 0;
  for (int half = 0; half < 2; ++half, q += 32)
    for (int shift = 0; shift < 8; shift += 2)
      for (int part = 0; part < 2; ++part) {
        const u8 sc = scales[is++];
        const float dl = d * static_cast<float>(sc & 0xf), ml = dmin * static_cast<float>(sc >> 4);
        for (int l = 0; l < 16; ++l) *y++ = dl * static_cast<float>((q[l + 16 * part] >> shift) & 3) - ml;
      }
}

void q3_k(const u8* b, float* y) {
  const u8* hm = b;
  const u8* q = b + 32;
  const u8* packed = b + 96;
  const float d = h2f(b + 108);
  // 16 six-bit scales: low 4 bits in bytes 0..7 (two per byte), high 2 bits in bytes 8..11.
  int8_t sc[16];
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (packed[i] & 0xf) : (packed[i - 8] >> 4);
    const int high = (packed[8 + (i % 4)] >> (2 * (i / 4))) & 3;
    sc[i] = static_cast<int8_t>((low | (high << 4)) - 32);
  }
  int is = 0;
  u8 m = 1;
  for (int half = 0; half < 2; ++half, q += 32)
    for (int shift = 0; shift < 8; shift += 2, m = static_cast<u8>(m << 1))
      for (int part = 0; part < 2; ++part) {
        const float dl = d * static_cast<float>(sc[is++]);
        for (int l = 0; l < 16; ++l) {
          const int k = l + 16 * part;
          const int v = ((q[k] >> shift) & 3) - ((hm[k] & m) ? 0 : 4);
          *y++ = dl * static_cast<float>(v);
        }
      }
}

// The 6-bit (scale, min) pair j of a K-quant super-block (Q4_K, Q5_K).
static void scale_min_k4(int j, const u8* s, u8& sc, u8& m) {
  if (j < 4) {
    sc = s[j] & 63;
    m = s[j + 4] & 63;
  } else {
    sc = static_cast<u8>((s[j + 4] & 0xf) | ((s[j - 4] >> 6) << 4));
    m = static_cast<u8>((s[j + 4] >> 4) | ((s[j] >> 6) << 4));
  }
}

void q4_k(const u8* b, float* y) {
  const float d = h2f(b), dmin = h2f(b + 2);
  const u8* scales = b + 4;
  const u8* q = b + 16;
  for (int j = 0; j < 8; j += 2, q += 32) {
    u8 sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>(q[l] & 0xf) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>(q[l] >> 4) - m2;
  }
}

void q5_k(const u8* b, float* y) {
  const float d = h2f(b), dmin = h2f(b + 2);
  const u8* scales = b + 4;
  const u8* qh = b + 16;
  const u8* ql = b + 48;
  u8 u1 = 1, u2 = 2;
  for (int j = 0; j < 8; j += 2, ql += 32, u1 = static_cast<u8>(u1 << 2), u2 = static_cast<u8>(u2 << 2)) {
    u8 sc, m;
    scale_min_k4(j, scales, sc, m);
    const float d1 = d * sc, m1 = dmin * m;
    scale_min_k4(j + 1, scales, sc, m);
    const float d2 = d * sc, m2 = dmin * m;
    for (int l = 0; l < 32; ++l) *y++ = d1 * static_cast<float>((ql[l] & 0xf) + ((qh[l] & u1) ? 16 : 0)) - m1;
    for (int l = 0; l < 32; ++l) *y++ = d2 * static_cast<float>((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
  }
}

void q6_k(const u8* b, float* y) {
  const u8* ql = b;
  const u8* qh = b + 128;
  const auto* sc = reinterpret_cast<const int8_t*>(b + 192);
  const float d = h2f(b + 208);
  for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8)
    for (int l = 0; l < 32; ++l) {
      const int is = l / 16;
      const int q1 = ((ql[l] & 0xf) | (((qh[l] >> 0) & 3) << 4)) - 32;
      const int q2 = ((ql[l + 32] & 0xf) | (((qh[l] >> 2) & 3) << 4)) - 32;
      const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
      const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
      y[l] = d * static_cast<float>(sc[is + 0]) * static_cast<float>(q1);
      y[l + 32] = d * static_cast<float>(sc[is + 2]) * static_cast<float>(q2);
      y[l + 64] = d * static_cast<float>(sc[is + 4]) * static_cast<float>(q3);
      y[l + 96] = d * static_cast<float>(sc[is + 6]) * static_cast<float>(q4);
    }
}

void q8_k(const u8* b, float* y) {
  float d;
  std::memcpy(&d, b, 4);
  const auto* qs = reinterpret_cast<const int8_t*>(b + 4);
  for (int j = 0; j < 256; ++j) y[j] = d * static_cast<float>(qs[j]);
}

void iq4_nl(const u8* b, float* y) {
  const float d = h2f(b);
  const u8* qs = b + 2;
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(kIQ4[qs[j] & 0xf]);
    y[j + 16] = d * static_cast<float>(kIQ4[qs[j] >> 4]);
  }
}

void iq4_xs(const u8* b, float* y) {
  const float d = h2f(b);
  const uint16_t sh = rd16(b + 2);
  const u8* sl = b + 4;
  const u8* qs = b + 8;
  for (int ib = 0; ib < 8; ++ib, y += 32, qs += 16) {
    const int ls = ((sl[ib / 2] >> (4 * (ib % 2))) & 0xf) | (((sh >> (2 * ib)) & 3) << 4);
    const float dl = d * static_cast<float>(ls - 32);
    for (int j = 0; j < 16; ++j) {
      y[j] = dl * static_cast<float>(kIQ4[qs[j] & 0xf]);
      y[j + 16] = dl * static_cast<float>(kIQ4[qs[j] >> 4]);
    }
  }
}

}  // namespace sy::ref::deq
