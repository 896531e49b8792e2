package kit

import (
	"image"

	"easel/app/imagefile"
	"easel/engine/pipeline"
)

// APIPicture is what a job from app/serve (Share this Mac) hands the window as its Owner: the
// picture and the settings its answer carries, saved as they are.
type APIPicture interface {
	Picture(*pipeline.Result) (*image.NRGBA, *imagefile.Settings, error)
}
