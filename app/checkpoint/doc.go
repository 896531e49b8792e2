// Package checkpoint saves a running generation's state so it can continue after a crash, a quit
// or a sleep exactly where it stopped (docs/ARCHITECTURE.md §8, "Checkpoints").
//
// A checkpoint is one file: the state after a denoiser step (the latents as float32, the batch's
// image and step, the schedule, the seeds), what the run was (the caller's request, opaque here),
// the model file's identity (its fingerprint, from the .cmf header) and the LoRAs' SHA-256, and the
// input images by digest, with copies stored once beside the file (FILE.files/), so a moved or
// edited source does not matter. Files are written atomically (a temporary file, fsync, rename);
// the Writer keeps at most one write in flight and skips a step's checkpoint rather than wait
// for the disk. Read refuses a file of a newer format, a corrupt or truncated one (and leaves it
// where it is, for inspection); Check refuses one made with another model or other LoRAs.
package checkpoint
