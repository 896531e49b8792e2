// Package imagework is the window's image-work region: the "Work on an image" section (the start
// image with its strength and fit, the mask tools, the canvas extension), the ways a picture
// becomes the start image or a condition image (a drop on the canvas or the column, a paste, the
// file dialog, Refine this, a dropped Easel PNG that asks whether to restore its recipe, start from
// it or use it as a condition image), the run's draft with the start image (JobDraft) and the
// generator wrapper that pastes a run back into its start image (Finishing).
//
// The start image, its mask, the extension and their settings are the canvas document of the
// window's model (ui/model): the region changes them only through the model's named actions, and
// its section follows every change of them (model.CanvasChanged), whoever made it. The
// canvas it paints on is reached through the Canvas interface, and what it needs of the window's
// shell (the undo steps, the file dialog, the question stack, the clipboard, the memory
// prediction…) through the Shell functions; it imports neither the shell nor another region.
package imagework
