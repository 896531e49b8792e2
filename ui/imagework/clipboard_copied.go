package imagework

import (
	"fmt"
	"os"

	"easel/app/compose"
)

// copiedFile is the file copied in the Finder when there is one and it is not a folder, else "".
// A paste looks at it first (PasteImage, PasteAsStart, pasteStart).
func (r *Region) copiedFile() string {
	if r.sh.ClipboardFile == nil {
		return ""
	}
	path := r.sh.ClipboardFile()
	if path == "" {
		return ""
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return ""
	}
	return path
}

// copiedPicture is the clipboard's picture as a condition named "pasted image N"; ok is false
// when the clipboard holds none, err says why one that is there cannot be read.
func (r *Region) copiedPicture() (c compose.Condition, ok bool, err error) {
	if r.sh.ClipboardImage == nil {
		return c, false, nil
	}
	data := r.sh.ClipboardImage()
	if len(data) == 0 {
		return c, false, nil
	}
	r.pasted++
	c, err = compose.NewCondition(fmt.Sprintf("pasted image %d", r.pasted), data)
	return c, true, err
}
