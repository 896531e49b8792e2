package compose

import (
	"fmt"
	"path/filepath"
	"strings"

	"easel/app/imagefile"
)

// restoreConditions replaces the condition list with the images a restored file was made with:
// each is looked for by name in d.LoRADirs (the LoRA folder, then the restored image's folder)
// and taken when its content hash matches. What is not found is named in the note, so the
// artist can add it again; the list never keeps images the restored one was not made with.
func (d *Draft) restoreConditions(refs []imagefile.ImageRef) (note string) {
	d.Conditions = nil
	var missing []string
	for _, ref := range refs {
		c, ok := findCondition(ref, d.LoRADirs)
		if !ok {
			missing = append(missing, ref.Name)
			continue
		}
		d.Conditions = append(d.Conditions, c)
	}
	if len(missing) == 0 {
		return ""
	}
	if len(missing) == len(refs) {
		return fmt.Sprintf("This image was made with %d condition image(s) (%s): add them again to remake it.", len(refs), strings.Join(missing, ", "))
	}
	return fmt.Sprintf("This image was made with %d condition images; %s not found beside it (or changed): add them again, in their order, to remake it.", len(refs), strings.Join(missing, ", "))
}

// findCondition loads the condition image ref names from the first of dirs where a file of that
// name has ref's content hash.
func findCondition(ref imagefile.ImageRef, dirs []string) (Condition, bool) {
	if ref.Name == "" || ref.Name != filepath.Base(ref.Name) {
		return Condition{}, false
	}
	for _, dir := range dirs {
		c, err := LoadCondition(filepath.Join(dir, ref.Name))
		if err == nil && (ref.SHA256 == "" || c.SHA256 == ref.SHA256) {
			return c, true
		}
	}
	return Condition{}, false
}
