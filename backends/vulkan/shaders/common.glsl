// Shared by every Switchyard compute shader. A kernel reads its node's record (written by
// the host, one per node per step) through the 8-byte address in the push constant; the
// record holds every tensor's device address, type, shape and byte strides, so shaders
// bind no descriptors (buffer device addresses, Vulkan 1.2).
//
// Tensor slots in the record: 0 is the destination, 1 + s is source s (graph.hpp's order).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#define DST 0
#define SRC0 1
#define SRC1 2
#define SRC2 3
#define SRC3 4
#define SRC4 5
#define SRC5 6
#define SRC6 7
#define SRC7 8

// Must match NodeRecord in kernels/kernel.hpp (std430, scalar arrays have stride 4/8).
layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer NodeRecord {
  uint64_t addr[9];  // device address of each tensor's first byte; 0 when absent
  uint type[9];      // storage type ids (switchyard/storage.hpp)
  uint n_src;
  int ne[36];        // [tensor * 4 + dim], innermost first
  int nb[36];        // byte strides, same indexing
  int ip[8];         // GraphNode::i
  float fp[4];       // GraphNode::f
  uint up[4];        // per-kernel values the host's plan computed (Launch::u)
  uint64_t scratch;  // the executor's scratch memory for this node (Launch::scratch_bytes), else 0
  uint64_t reserved;
};

layout(push_constant) uniform Push { NodeRecord node; } pc;

layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Ref { float v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32Ref { int v; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Ref { uint v; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16Ref { uint16_t v; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Ref { uint8_t v; };

int ne(int t, int d) { return pc.node.ne[t * 4 + d]; }
int64_t nb(int t, int d) { return int64_t(pc.node.nb[t * 4 + d]); }
uint64_t base(int t) { return pc.node.addr[t]; }
/// Address of element (i0, i1, i2, i3) of tensor t (i0 in elements of a plain type).
uint64_t at(int t, int i0, int i1, int i2, int i3) {
  return pc.node.addr[t] + uint64_t(int64_t(i0) * nb(t, 0) + int64_t(i1) * nb(t, 1) + int64_t(i2) * nb(t, 2) +
                                    int64_t(i3) * nb(t, 3));
}
/// Address of row (i1, i2, i3) of tensor t.
uint64_t row(int t, int i1, int i2, int i3) {
  return pc.node.addr[t] + uint64_t(int64_t(i1) * nb(t, 1) + int64_t(i2) * nb(t, 2) + int64_t(i3) * nb(t, 3));
}

float ld_f32(uint64_t a) { return F32Ref(a).v; }
void st_f32(uint64_t a, float x) { F32Ref(a).v = x; }
int ld_i32(uint64_t a) { return I32Ref(a).v; }
void st_i32(uint64_t a, int x) { I32Ref(a).v = x; }
uint ld_u32(uint64_t a) { return U32Ref(a).v; }
uint ld_u16(uint64_t a) { return uint(U16Ref(a).v); }
uint ld_u8(uint64_t a) { return uint(U8Ref(a).v); }
void st_u8(uint64_t a, uint x) { U8Ref(a).v = uint8_t(x); }
void st_u16(uint64_t a, uint x) { U16Ref(a).v = uint16_t(x); }
float ld_f16(uint64_t a) { return unpackHalf2x16(ld_u16(a)).x; }
void st_f16(uint64_t a, float x) { st_u16(a, packHalf2x16(vec2(x, 0.0)) & 0xffffu); }
float ld_bf16(uint64_t a) { return uintBitsToFloat(ld_u16(a) << 16); }

// Storage type ids used by shaders (switchyard/storage.hpp).
#define T_F32 0u
#define T_F16 1u
#define T_Q4_0 2u
#define T_Q4_1 3u
#define T_Q5_0 6u
#define T_Q5_1 7u
#define T_Q8_0 8u
#define T_Q2_K 10u
#define T_Q3_K 11u
#define T_Q4_K 12u
#define T_Q5_K 13u
#define T_Q6_K 14u
#define T_I32 26u
#define T_BF16 30u
