//go:build darwin

package activity

import (
	"sync"

	"github.com/progrium/darwinkit/macos/foundation"
	"github.com/progrium/darwinkit/objc"

	"easel/engine/objcsafe"
)

// Hold begins an activity that keeps the Mac from idle-sleeping and returns the function that
// ends it (once; later calls do nothing).
func Hold(reason string) (end func()) {
	return begin(uint64(foundation.ActivityUserInitiated), reason)
}

// begin begins an NSProcessInfo activity with options and returns the function that ends it
// (once).
func begin(options uint64, reason string) (end func()) {
	var token objc.Object
	objcsafe.WithPool(func() {
		// The token comes back autoreleased: retained here, released after endActivity:.
		token = foundation.ProcessInfo_ProcessInfo().BeginActivityWithOptionsReason(foundation.ActivityOptions(options), reason).Retain()
	})
	var once sync.Once
	return func() {
		once.Do(func() {
			objcsafe.WithPool(func() {
				foundation.ProcessInfo_ProcessInfo().EndActivity(token)
				token.Release()
			})
		})
	}
}
