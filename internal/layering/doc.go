// Package layering checks the module's import graph (go list -deps) against the layers
// docs/ARCHITECTURE.md draws: dependencies point down only. Its test is the check; the package
// holds no code.
package layering
