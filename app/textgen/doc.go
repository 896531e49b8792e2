// Package textgen is prompt help written by the model Easel already holds: Qwen-Image-2.1's text
// encoder is a whole Qwen3-VL instruct model, and with its language head (engine/qwen3vl's
// Generate) it writes. Three uses, shared by the command line, the server and the window:
//
//   - Expand: a short idea becomes a detailed prompt (the subject, language and anything explicit
//     kept; composition, light, materials and style added), as Qwen's guidance for 2.1 rewrites.
//   - Describe: an image becomes a prompt (A1111's Interrogate, Fooocus' Describe).
//   - Check: after an image is made, whether each element the prompt names is in it (✓ / ✗).
//
// A Writer wraps the encoder with the model file's tokenizer and image processor; each use builds
// its chat, streams the text as it is written (never splitting a character) and reports tokens,
// tokens per second and stage times.
package textgen
