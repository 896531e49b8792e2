// struct MmParams: the parameters of the denoiser's quantized GEMMs, shared by the baseline
// (gemm.metal) and its variants (gemmvar.metal, gemmtensor.metal), so every GEMM kernel reads the
// one layout kernels.MmParams mirrors. Pasted by kernels.Source like gemmtile.h.
#ifndef EASEL_MMPARAMS_H
#define EASEL_MMPARAMS_H

struct MmParams {
    uint n;            // token rows of x and y
    uint rows;         // output features = rows of W
    uint k;            // reduction length = columns of W and x
    uint ldx;          // elements between consecutive rows of x
    uint ldy;          // elements between consecutive rows of y
    uint epi;          // 0: float y, 1: half y
    float mul;         // scale applied to every output
    uint params_off;   // q4tp: byte offset of the row params plane in the payload
    uint codes_off;    // q4tp: byte offset of the 5-bit code plane
    uint code_stride;  // q4tp: bytes per row of the code plane
    uint pad0;
    uint pad1;
    uint x_off[4];     // per z slice: element offset of x
    uint y_off[4];     // per z slice: element offset of y
};

#endif // EASEL_MMPARAMS_H
