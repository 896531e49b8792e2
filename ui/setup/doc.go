// Package setup holds the windows that set Easel up: the first-run window (open a .cmf, convert a
// downloaded snapshot, or download the official model), the settings dialog, the offer to choose
// the model again when its file went away during a job (ModelLost), and the diagnostics report
// the Help menu copies (Diagnostics). The work itself is app/modelsetup's; these only show it
// and send it commands. They live apart from the main window's package so either can change
// without the other.
package setup
