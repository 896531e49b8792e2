package imagework

import (
	"bytes"
	"context"
	"encoding/hex"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

// SystemClipboardFile returns the path of a file copied in the Finder, or "". (The Finder puts
// the file's URL on the pasteboard and only its name as text; asked for a picture, the pasteboard
// would give the file's icon, so the file comes first.)
func SystemClipboardFile() string {
	if runtime.GOOS != "darwin" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "osascript", "-e", "POSIX path of (the clipboard as «class furl»)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// SystemClipboardImage returns the clipboard's image as PNG bytes, or nil. Fyne's clipboard is
// text only, so this asks the system: on macOS through osascript («class PNGf»), on Linux through
// wl-paste or xclip when installed. It gives up after two seconds.
func SystemClipboardImage() []byte {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	switch runtime.GOOS {
	case "darwin":
		out, err := exec.CommandContext(ctx, "osascript", "-e", "the clipboard as «class PNGf»").Output()
		if err != nil {
			return nil
		}
		s := strings.TrimSpace(string(out)) // «data PNGf89504E47…»
		s = strings.TrimPrefix(s, "«data PNGf")
		s = strings.TrimSuffix(s, "»")
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil
		}
		return b
	case "linux":
		for _, cmd := range [][]string{{"wl-paste", "--type", "image/png"}, {"xclip", "-selection", "clipboard", "-t", "image/png", "-o"}} {
			if _, err := exec.LookPath(cmd[0]); err != nil {
				continue
			}
			out, err := exec.CommandContext(ctx, cmd[0], cmd[1:]...).Output()
			if err == nil && bytes.HasPrefix(out, []byte("\x89PNG")) {
				return out
			}
		}
	}
	return nil
}
