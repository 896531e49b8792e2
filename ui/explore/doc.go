// Package explore is the window's Explore region: the recipe column's Explore section (up to
// three axes chosen in plain words with their values typed, the cell count and the predicted
// memory and time before starting) and the grid it makes, shown in the centre as its cells
// finish, each cell saved under the grid's identity and the labelled grid saved after them.
//
// It reads the draft and the canvas document from ui/model and says its notices there; what it
// needs of the shell (submitting a job, saving a picture, restoring a cell, Vary and the second
// passes of the batch region) comes through Shell. It imports no other region.
package explore
