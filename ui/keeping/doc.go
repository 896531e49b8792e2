// Package keeping is the window's keeping of its work, so that no job and no image is lost: the
// jobs kept across a crash, a quit or a restart (app/unfinished) with a checkpoint every step and
// the offer to resume them at the next launch (one row per job, ui/queue's Offer); the finished
// images written off the UI goroutine, which closing the window waits for; and the images that
// could not be saved (a full disk, a folder gone), held until saved in another folder with the
// Save to… button.
//
// A kept job goes (its checkpoints removed) only once it is over — finished, or cancelled by the
// artist — and every image of it is on disk; a job stopped by a crash or a quit stays kept, and
// closing the window waits for its checkpoint writes in flight so the next launch resumes it from
// its latest step, bit for bit.
//
// It reads the jobs' records from the window's model (ui/model) and says its notices there; what
// it needs of the shell (submitting a resumed job, listing a saved image, what the canvas shows)
// comes through Shell. It imports neither the shell nor another region's widgets.
package keeping
