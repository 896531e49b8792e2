// msl_emu_end.h - ends the kernel part of a kernels/emu translation unit: removes the MSL keyword
// and vector-constructor macros of metal_stdlib so the host code that follows is plain C++.
#pragma once
#undef device
#undef constant
#undef threadgroup
#undef thread
#undef kernel
#undef float2
#undef float3
#undef float4
#undef half2
#undef half3
#undef half4
#undef int2
#undef int3
#undef int4
#undef uint2
#undef uint3
#undef uint4
#undef short2
#undef short4
#undef ushort2
#undef ushort4
#undef char4
#undef uchar4
#undef ulong2
