// Package backend chooses where a generation's denoiser runs from the artist's backend setting
// (app/settings): auto runs it on Metal on a Mac with Apple silicon whose Metal device opens, and
// on the CPU otherwise; metal insists on Metal and fails with a sentence saying why it cannot;
// cpu runs everything on the CPU. The choice carries a sentence saying why, for the CLI's
// verbose and --json output and the app's status line, and gives the pipeline options that put
// the DiT on the device (with the pipeline's decline → CPU fallback) or leave it on the CPU.
//
// The Metal emulator (kernels/emu) is never chosen here: it is a test and benchmark device, not
// a backend.
package backend
