// Package canvasarea is the window's centre region: the canvas (the live preview, the final
// image, the start image with the mask editor, the extension arrows and the generation frame
// drawn over it, with handles that move and resize the frame through the window's actions) and
// the switch that puts the canvas, the batch's contact sheet or Explore's grid in the centre. It
// imports the window's model (ui/model) for the canvas's sides and the frame's rules; the
// window's shell builds it and tells it what to show.
package canvasarea
