package grid

import (
	"fmt"
	"regexp"
	"strings"
)

// MaxCells is the most cells one grid (one Z value) holds.
const MaxCells = 64

// Labels are the axes' names in messages: X, Y, Z.
var Labels = [3]string{"X", "Y", "Z"}

// Grid is up to three axes and the prompt they vary.
type Grid struct {
	// Axes are X, Y and Z; nil where the axis is not used (a used Y may follow an unused X only
	// when the prompt's alternatives took X: Parse fills the first free axis).
	Axes [3]*Axis
	// Prompt is the prompt as written, with its {a|b} groups.
	Prompt string
	// Titles name the axes in the grid image's corner where set (a window's words for them,
	// "Prompt: replace words"); an empty one names its axis as Name does ("prompt-sr").
	Titles [3]string
}

// altGroup finds a prompt's {a|b|c} alternatives.
var altGroup = regexp.MustCompile(`\{([^{}]*\|[^{}]*)\}`)

// HasAlternatives reports whether a prompt holds {a|b} alternatives (which make a grid).
func HasAlternatives(prompt string) bool { return altGroup.MatchString(prompt) }

// Parse reads the axes X, Y, Z (each "" when not given) against c. The prompt's {a|b|c} groups
// each take the first free axis, in order. Every error is a sentence naming the axis.
func Parse(specs [3]string, c Context) (*Grid, error) {
	g := &Grid{Prompt: c.Prompt}
	seen := map[string]string{}
	for i, spec := range specs {
		if strings.TrimSpace(spec) == "" {
			continue
		}
		a, err := ParseAxis(Labels[i], spec, c)
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(a.Name())
		if prev, ok := seen[key]; ok {
			return nil, fmt.Errorf("grid axis %s %s: %s is already axis %s: an axis may vary a setting once, choose another setting", Labels[i], a.Name(), a.Name(), prev)
		}
		seen[key] = Labels[i]
		g.Axes[i] = a
	}
	for gi, m := range altGroup.FindAllStringSubmatch(c.Prompt, -1) {
		free := -1
		for i := range g.Axes {
			if g.Axes[i] == nil {
				free = i
				break
			}
		}
		if free < 0 {
			return nil, fmt.Errorf("grid: the prompt's alternatives {%s} need an axis, and X, Y and Z are all taken: remove one --grid axis or the braces", m[1])
		}
		a := &Axis{Kind: Prompt, Group: gi}
		for _, alt := range strings.Split(m[1], "|") {
			a.Values = append(a.Values, Value{Text: strings.TrimSpace(alt)})
		}
		if err := checkCount(fmt.Sprintf("grid axis %s %s", Labels[free], a.Name()), a); err != nil {
			return nil, err
		}
		g.Axes[free] = a
	}
	if g.Empty() {
		return g, nil
	}
	if n := g.PerGrid(); n > MaxCells {
		return nil, fmt.Errorf("grid axis Y %s: %d × %d makes %d cells; a grid has at most %d: choose fewer values on X or Y", g.len(1).name, g.len(0).n, g.len(1).n, n, MaxCells)
	}
	return g, nil
}

type axisLen struct {
	name string
	n    int
}

func (g *Grid) len(i int) axisLen {
	if g.Axes[i] == nil {
		return axisLen{"(none)", 1}
	}
	return axisLen{g.Axes[i].Name(), len(g.Axes[i].Values)}
}

// Empty reports whether the grid has no axis (a single run).
func (g *Grid) Empty() bool { return g.Axes == [3]*Axis{} }

// Dims are the number of values along X, Y and Z (1 for an unused axis).
func (g *Grid) Dims() [3]int { return [3]int{g.len(0).n, g.len(1).n, g.len(2).n} }

// PerGrid is the cells of one grid image (X × Y).
func (g *Grid) PerGrid() int { d := g.Dims(); return d[0] * d[1] }

// Count is every cell (X × Y × Z).
func (g *Grid) Count() int { d := g.Dims(); return d[0] * d[1] * d[2] }

// Cell is one cell: its place in row-major order and its position along each axis.
type Cell struct {
	Index int    // 0-based; files are numbered Index+1
	Pos   [3]int // the value's index along X, Y, Z (0 for an unused axis)
}

// Cells are every cell in row-major order: X varies fastest, then Y, then Z.
func (g *Grid) Cells() []Cell {
	d := g.Dims()
	cells := make([]Cell, 0, g.Count())
	for z := range d[2] {
		for y := range d[1] {
			for x := range d[0] {
				cells = append(cells, Cell{Index: len(cells), Pos: [3]int{x, y, z}})
			}
		}
	}
	return cells
}

// Values are a cell's axis values by axis name ("seed": "3"), as --json events and the grid's
// metadata name them.
func (g *Grid) Values(c Cell) map[string]string {
	m := map[string]string{}
	for i, a := range g.Axes {
		if a != nil {
			m[a.Name()] = a.Values[c.Pos[i]].Text
		}
	}
	return m
}

// Describe is a cell's axis values as one line: "seed=3, steps=8".
func (g *Grid) Describe(c Cell) string {
	var parts []string
	for i, a := range g.Axes {
		if a != nil {
			parts = append(parts, a.Name()+"="+a.Values[c.Pos[i]].Text)
		}
	}
	return strings.Join(parts, ", ")
}
