// Package desktop hands a saved image to the rest of the desktop: showing it in the Finder or the
// file manager, putting it on the clipboard as a picture, and moving it to the Trash so Undo can
// put it back (trash.go). The commands are built by pure
// functions (what to run on which system, checked by tests); an Opener runs them, and says which
// tool to install when the system lacks it.
package desktop
