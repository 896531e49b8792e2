// Package diagnose builds the report `easel diagnose` prints and the window's "Copy diagnostics"
// copies: the machine (chip, OS build, memory, thermal state, this process's footprint), where
// the networks run and why (or why Metal is unavailable), the GPU's family and limits, the
// first-use self-test's result per kernel, the half guards in use, and the last job's stage
// times, GPU time per kernel class, declines and retries. Nothing personal goes in: no prompts,
// no user or host names, no paths beyond the model file's name. This report is how figures from
// Macs reach the project: the README asks Mac owners to paste it into an issue.
package diagnose
