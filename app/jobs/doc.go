// Package jobs runs generations one at a time on a worker goroutine, behind a visible queue:
// every job can be listed, and cancelled whether it waits or runs. The window submits requests
// and renders the updates the queue reports; it never waits for a generation itself.
package jobs
