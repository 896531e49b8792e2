package ui

import (
	"fmt"
	"os"

	"fyne.io/fyne/v2"
)

// QuitWhenShownEnv, set to any value, makes the app write "easel: window shown: TITLE" to stderr
// once its first window is on screen and then quit (exit 0). It exists for the launch test
// (main_test.go: `easel -psn_0_4242` under Xvfb must open the window, not exit 2); nothing else
// sets it.
const QuitWhenShownEnv = "EASEL_QUIT_WHEN_SHOWN"

// quitWhenShown arranges that, when QuitWhenShownEnv is set.
func quitWhenShown(a fyne.App) {
	if os.Getenv(QuitWhenShownEnv) == "" {
		return
	}
	a.Lifecycle().SetOnStarted(func() {
		title := ""
		if ws := a.Driver().AllWindows(); len(ws) > 0 {
			title = ws[0].Title()
		}
		fmt.Fprintf(os.Stderr, "easel: window shown: %s\n", title)
		fyne.Do(a.Quit)
	})
}
