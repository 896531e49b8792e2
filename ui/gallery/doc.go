// Package gallery is the window's sheets of pictures: the contact sheet of the latest batch (a
// cell per image filling as each finishes, Vary's variations in a tab beside it, Keep, Discard,
// Vary, Refine and Upscale on the selected cell). The shell supplies what its buttons do
// (Actions) and tells it each image's progress; it imports no other part of the window.
package gallery
