// Package recipe is the recipe region of the main window, the column on the left: the prompt
// panel (the prompt, the negative prompt, the transparent-background toggle) and the entries the
// column's fields are made of. Its panels observe the window model's draft (ui/model) and change
// it only through the model's named actions; the keys the whole window answers (Escape, pasting
// an image) are the shell's, passed in as Keys.
package recipe
