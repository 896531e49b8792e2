package qwen3vl

import (
	"encoding/json"

	"easel/engine/published"
)

// PublishedConfigs are Qwen3-VL-8B's text and vision geometry as the published snapshot's
// text_encoder/config.json holds them (engine/published): for plans made before a
// model file is chosen.
func PublishedConfigs() (TextConfig, VisionConfig) {
	var whole map[string]json.RawMessage
	if err := json.Unmarshal(published.File(published.TextEncoderPath), &whole); err != nil {
		panic("qwen3vl: the published text encoder config is not JSON: " + err.Error())
	}
	tc, err := ParseTextConfig(whole["text_config"])
	if err != nil {
		panic("qwen3vl: the published text config does not validate: " + err.Error())
	}
	vc, err := ParseVisionConfig(whole["vision_config"])
	if err != nil {
		panic("qwen3vl: the published vision config does not validate: " + err.Error())
	}
	return tc, vc
}
