package seed

// Float64 is the next uniform draw in [0, 1) from the generator's stream (torch's
// uniform_real_distribution<double>): what text sampling uses, so a seed repeats its text.
func (g *Generator) Float64() float64 { return g.uniformFloat64() }
