// Package activity keeps the Mac from idle-sleeping while a job runs: an NSProcessInfo activity
// (user-initiated, which disables idle system sleep; closing the lid still sleeps the Mac), begun
// when a job starts and ended when it finishes. While Easel waits for work others send (lending
// to a studio, hosting a hub, serving the API) KeepResponsive holds a lighter activity that keeps
// App Nap off but lets the Mac sleep (responsive.go). Elsewhere both do nothing.
//
// It also tells the app when the Mac is about to sleep and when it has woken (sleep.go; on macOS
// IOKit's system power notices, which reach the window and a command-line process alike): a
// running job writes its checkpoint, a studio worker hands its job back and takes none until the
// wake.
package activity

// Reason is the sentence the Mac shows for the assertion (pmset -g assertions).
const Reason = "Easel is making an image"
