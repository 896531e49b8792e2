package remote

import (
	"errors"

	"easel/app/studiogen"
)

// studioModel is the model file in Settings and its fingerprint (the studio's jobs are matched
// by it); without one it refuses, saying why the studio needs it.
func (w *Work) studioModel(why string) (model, fingerprint string, err error) {
	model = w.sh.Settings().Model
	if model == "" {
		return "", "", errors.New("choose a model in Settings first: " + why)
	}
	fingerprint, err = studiogen.ModelFingerprint(model)
	return model, fingerprint, err
}
