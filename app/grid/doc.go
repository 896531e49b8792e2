// Package grid is Easel's X/Y/Z plot ("Explore"): up to three axes, each a setting and its
// values (NAME=VALUES, with integer and numeric ranges), or a prompt's {a|b|c} alternatives; the
// cells they make in row-major order (X fastest, then Y, then Z); the order that runs them
// sharing the most work (one prefill per distinct prompt, LoRA weights and size); and the grid
// image with the axes' labels drawn in the Go fonts.
//
// It knows nothing of the pipeline: a cell is a Setup (the settings a generation takes), and the
// CLI, the API and the window turn Setups into requests.
package grid
