// Package activity keeps the Mac from idle-sleeping while a job runs: an NSProcessInfo activity
// (user-initiated, which disables idle system sleep; closing the lid still sleeps the Mac), begun
// when a job starts and ended when it finishes. Elsewhere Hold does nothing.
package activity

// Reason is the sentence the Mac shows for the assertion (pmset -g assertions).
const Reason = "Easel is making an image"
