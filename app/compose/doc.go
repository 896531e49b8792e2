// Package compose is the generation an artist is setting up in the window, without widgets: the
// prompts (and the transparent-background wording), the condition images with their limits,
// order and encoded sizes, the output size (official presets, custom, or from the last condition
// image), steps, CFG and seed. It turns the draft into a pipeline request, a memory plan and the
// settings stored in the PNG, and restores a draft from those settings.
package compose
