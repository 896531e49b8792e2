// Package batch is the window's batch region: the contact sheet (ui/gallery's Sheet) filled by a
// batch job's events in the centre, each image saved with the batch's identity as it finishes,
// and what is done to its images: open one on the canvas, discard it or keep it again, Vary
// around it, Refine it or Upscale it (after an offer saying the size, steps, time and whether it
// fits). An API job's batch (Share this Mac) goes to the history only, never onto the sheet.
//
// It reads the jobs' records and the draft from ui/model and says its notices there; what it
// needs of the shell (the canvas, submitting, saving, the offer dialog, the upscalers' first
// stage) comes through Shell. It imports no other region.
package batch
