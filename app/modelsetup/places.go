package modelsetup

import (
	"path/filepath"

	"easel/app/settings"
	"easel/engine/convert"
)

// ModelsDir is where converted and downloaded model files go: the models/ folder of the
// app-support folder.
func ModelsDir() (string, error) {
	dir, err := settings.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "models"), nil
}

// DownloadsDir is where the official snapshot is downloaded before it is converted (partial
// files stay there between a pause and a resume).
func DownloadsDir() (string, error) {
	dir, err := settings.Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "downloads", "Qwen-Image-2.1"), nil
}

// ModelFileName is the name a conversion with profile gets in ModelsDir.
func ModelFileName(p convert.Profile) string {
	if p == "" {
		p = convert.ProfileCortiq
	}
	return "qwen-image-2.1-" + string(p) + ".cmf"
}

// DefaultModelPath is where a conversion with profile is written unless the artist chooses
// another place.
func DefaultModelPath(p convert.Profile) (string, error) {
	dir, err := ModelsDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, ModelFileName(p)), nil
}
