package grid

import "easel/app/imagefile"

// Settings are what grid image z records of the grid: its axes and values, its Z value, and the
// files of its cells (files[i] is cell i's; "" for a cell not made).
func (g *Grid) Settings(z int, files []string) *imagefile.GridSettings {
	s := &imagefile.GridSettings{}
	for i, a := range g.Axes {
		if a == nil {
			continue
		}
		ax := imagefile.GridAxis{Place: Labels[i], Name: a.Name()}
		for _, v := range a.Values {
			ax.Values = append(ax.Values, v.Text)
		}
		s.Axes = append(s.Axes, ax)
		if i == 2 {
			s.Z = a.Name() + "=" + a.Values[z].Text
		}
	}
	per := g.PerGrid()
	for i := z * per; i < (z+1)*per && i < len(files); i++ {
		s.Cells = append(s.Cells, files[i])
	}
	return s
}
