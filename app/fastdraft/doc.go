// Package fastdraft makes fast drafts the default way to explore: it knows the published
// few-step LoRAs of Qwen-Image-2.1 (Lightning 4-step, the Turbo extractions), downloads one the
// way the model itself is downloaded (app/download: the license and the size shown first,
// resumable over HTTP Range, checked against the hub's SHA-256), records its sampling preset
// beside it (lora.WritePresetFile), and turns the window's "Draft / Final" switch into settings:
// the LoRA and its preset for drafts, the model's full schedule for the final pass.
//
// The repositories, file names and presets come from the publishers' model cards as far as they
// could be read; the files' sizes and hashes could not be checked against the real hub when this
// was written, so the size shown is always the hub's own listing, and the hash that verifies the
// download is the one the hub lists for the file.
package fastdraft
