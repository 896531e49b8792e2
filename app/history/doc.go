// Package history keeps the images an artist has made: the ones of this session, as they finish,
// and the ones already in the output folder, with the settings each PNG carries (app/imagefile),
// so that clicking a past image restores how it was made.
package history
