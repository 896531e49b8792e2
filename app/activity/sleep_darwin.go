//go:build darwin

package activity

import "github.com/progrium/darwinkit/objc"

// observeSleep adds an observer of NSWorkspaceWillSleepNotification to the shared workspace's
// notification center that calls WillSleep on the posting (main) thread, so the Mac waits for
// the checkpoints (at most FlushTimeout) before it sleeps. Raw objc.Call on the objects
// themselves; untested on a Mac (docs/ARCHITECTURE.md).
func observeSleep() {
	objc.WithAutoreleasePool(func() {
		ws := objc.Call[objc.Object](objc.GetClass("NSWorkspace"), objc.Sel("sharedWorkspace"))
		center := objc.Call[objc.Object](ws, objc.Sel("notificationCenter"))
		// The token comes back autoreleased; the center keeps the observer for the life of the
		// process, and so does this retain (never removed).
		objc.Call[objc.Object](center, objc.Sel("addObserverForName:object:queue:usingBlock:"),
			"NSWorkspaceWillSleepNotification", objc.Object{}, objc.Object{},
			func(notification objc.Object) { WillSleep() }).Retain() //easel:keep the sleep observer lives as long as the process
	})
}
