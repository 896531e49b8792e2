package imagefile

// GridSettings record, in a grid image (app/grid), the axes it shows: each axis's place (X, Y,
// Z), name and values in order, the Z value this image is (when there is a Z axis), and the
// cells' files in row-major order (X fastest).
type GridSettings struct {
	Axes  []GridAxis `json:"axes"`
	Z     string     `json:"z,omitempty"`
	Cells []string   `json:"cells,omitempty"`
}

// GridAxis is one axis of a grid.
type GridAxis struct {
	Place  string   `json:"place"` // "X", "Y" or "Z"
	Name   string   `json:"name"`  // "seed", "lora:style", "prompt"
	Values []string `json:"values"`
}
