package serve

import (
	"encoding/json"
	"fmt"
	"math"

	"easel/engine/sched"
)

// maxSigmas is the longest fixed sigma grid a request may carry (the steps field's limit).
const maxSigmas = 1000

// readSchedule reads Easel's own schedule fields: easel_sigmas, a fixed sigma grid (one per step,
// each in (0, 1], without the terminal 0), and easel_scheduler, a scheduler configuration with the
// keys of the model's scheduler_config.json. A1111 has neither; the window sends them for a LoRA
// preset's schedule, which a step count alone would change. steps, when given, must be the grid's
// length.
func readSchedule(f *fields, steps int) ([]float64, *sched.Config) {
	var sigmas []float64
	if r, ok := f.raw("easel_sigmas"); ok {
		if err := json.Unmarshal(r, &sigmas); err != nil {
			f.fail("easel_sigmas", "value is not a valid list of floats", "type_error.list", nil)
			return nil, nil
		}
		switch {
		case len(sigmas) == 0 || len(sigmas) > maxSigmas:
			f.Invalid("easel_sigmas", fmt.Sprintf("a grid of %d sigmas: give between 1 and %d (one per step)", len(sigmas), maxSigmas))
			return nil, nil
		case steps != 0 && steps != len(sigmas):
			f.Invalid("easel_sigmas", fmt.Sprintf("%d sigmas for %d steps: the grid has one sigma per step (leave steps out or make it %d)", len(sigmas), steps, len(sigmas)))
			return nil, nil
		}
		for i, s := range sigmas {
			if math.IsNaN(s) || !(s > 0 && s <= 1) {
				f.Invalid("easel_sigmas", fmt.Sprintf("sigma %d is %g: sigmas lie in (0, 1]", i, s))
				return nil, nil
			}
		}
	}
	var cfg *sched.Config
	if r, ok := f.raw("easel_scheduler"); ok {
		c := sched.Config{}
		if err := json.Unmarshal(r, &c); err != nil {
			f.fail("easel_scheduler", "value is not a valid scheduler configuration (a dict of scheduler_config.json's keys)", "type_error.dict", nil)
			return sigmas, nil
		}
		if err := c.Validate(); err != nil {
			f.Invalid("easel_scheduler", err.Error())
			return sigmas, nil
		}
		cfg = &c
	}
	return sigmas, cfg
}
