package qi21

import "easel/engine/published"

// PublishedConfig is the released transformer's geometry (spec §6.1), parsed from the published
// transformer/config.json (engine/published). The model itself always reads its geometry from
// dit.config_json; this is for plans and benchmarks made before a model file is chosen.
func PublishedConfig() Config {
	c, err := ParseConfig(published.File(published.TransformerPath))
	if err != nil {
		panic("qi21: the published transformer config does not validate: " + err.Error())
	}
	return c
}
