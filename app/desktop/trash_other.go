//go:build !darwin

package desktop

// trashItem is the Finder's Trash, which exists only on macOS (Trash uses the freedesktop one).
var trashItem func(path string) (string, error)
