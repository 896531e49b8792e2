// Package app is Easel without widgets: settings, the model registry, generation jobs and their
// queue, history, the downloader. The window (ui/) and the command line (app/cli) both drive it.
package app

// Name is the product name shown in the window title and the CLI.
const Name = "Easel"

// ID is the application identifier (bundle ID on macOS); it matches FyneApp.toml.
const ID = "app.easel.Easel"

// Version is the release version; it matches Details.Version in FyneApp.toml (a test checks).
const Version = "0.1.0"
