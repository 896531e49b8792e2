// Package model is the main window's model: the canvas document (the start image, the mask
// painted on it, the extension and the generation frame they make), the notice the window shows
// and the records of the jobs it submitted. The window's regions observe it (Observe) and change
// it only through its named actions (SetStart, Extend, Say, Submitted…); none of them touches
// another's widgets. It imports no widget toolkit: everything here is tested alone, and every
// call runs on the UI goroutine (observers are called there, synchronously, in the order they
// registered).
package model
