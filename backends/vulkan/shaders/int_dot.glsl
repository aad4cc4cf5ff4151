// VK_KHR_shader_integer_dot_product for the fast-path variants (attention.comp and qdot.glsl
// with -DINT_DOT=1). The glslang here has no GLSL extension for it, so the SPIR-V
// instruction is declared through GL_EXT_spirv_intrinsics. Include it before any other
// code (it carries an #extension directive); the device enables the feature only where it
// has it, and kernels pick these variants only then.
#extension GL_EXT_spirv_intrinsics : require

// OpSDot (4450) with capabilities DotProductKHR (6019) and DotProductInput4x8BitPackedKHR
// (6018): a and b are each four signed bytes packed in a 32-bit word; fmt must be 0
// (PackedVectorFormat4x8Bit). The sum of the four byte products, exact.
spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot4(int a, int b, spirv_literal int fmt);
