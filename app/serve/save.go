package serve

import (
	"fmt"
	"image"

	"easel/app/imagefile"
)

// save keeps an image a request asked to save (save_images: true), as A1111 saves into its
// output folder: through Config.Save, the server's output folder and history. It returns the
// warnings for the answer (save_images refused, or the save failed).
func (s *Server) save(img *image.NRGBA, set *imagefile.Settings) []string {
	if s.cfg.NoSave {
		return []string{"save_images was refused: this server does not save images (it was started with --no-save); the image is only in this answer"}
	}
	if s.cfg.Save == nil {
		return nil // the host saves every image (the window's history)
	}
	if err := s.cfg.Save(img, set); err != nil {
		s.cfg.Log.Printf("saving an API image: %v", err)
		return []string{fmt.Sprintf("save_images: the image could not be saved on the server (%s); it is only in this answer", noPaths(err.Error()))}
	}
	return nil
}

// dedupe is a list of sentences with each said once, in order.
func dedupe(list []string) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
