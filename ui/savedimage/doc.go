// Package savedimage is what the window offers on a saved image: the buttons over the canvas
// while one is shown there (Show in Finder or Show in folder, Copy image, Refine this, Continue
// from this) and the history's right-click menu on an image (its recipe whole or in part, the
// actions that make new images from it, the file's). It keeps which saved file the canvas shows
// and which is the latest result of an edit; everything else it asks of the shell through Shell.
// It imports app/ and no other region: the upscales and the prompt help put their own items in
// the menu through Shell.
package savedimage
