// struct FlashParams: the parameters of the denoiser's attention, shared by the baseline
// (flash.metal) and its variants (flashvar.metal), so every attention kernel reads the one layout
// kernels.FlashParams mirrors. Pasted by kernels.Source like gemmtile.h.
#ifndef EASEL_FLASHPARAMS_H
#define EASEL_FLASHPARAMS_H

struct FlashParams {
    uint q_row0;   // panel row of query 0 (and output row of query 0)
    uint nq;       // queries
    uint n_pre;    // prefix keys in pkv
    uint n_own;    // own keys = panel rows 0 .. n_own
    uint ldp;      // panel row stride in elements (3h)
    uint h;        // model width (heads · 128)
    uint ldo;      // output row stride in elements
    float oscale;  // applied to the output
    uint use_vis;  // 1: block-causal visibility from vis
    uint pad0;
    uint pad1;
    uint pad2;
};

#endif // EASEL_FLASHPARAMS_H
