// Package prompthelp is the recipe column's prompt help: Expand, Describe and Check
// (app/textgen) beside the prompt. The model's own text encoder writes into a suggestion the
// artist accepts, edits or discards; Expand starts from the prompt, Describe from the picture
// shown, the start image, a condition image, a history or batch image or a file dropped on the
// panel; Check asks whether each element of a prompt is in a picture. One writing runs at a time,
// off the UI goroutine; Stop cancels it and leaves the prompt as it was.
//
// The panel reads and changes the window model (ui/model): the draft's prompt through
// model.Window.SetPrompt, notices through Say. What it needs of the shell (the settings, the
// memory figures, the picture on the canvas, the memory panel while it writes) comes in a Host.
package prompthelp
