//go:build darwin

package freespace

import (
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"

	"easel/engine/objcsafe"
)

// available asks Foundation for the volume's available capacity for important usage (what
// Finder shows, purgeable space included); statfs when the OS gives no answer.
func available(dir string) (int64, error) {
	var n int64
	ok := false
	objcsafe.WithPool(func() { // the URL, the key string and the NSNumber are autoreleased
		url := foundation.URL_FileURLWithPath(dir)
		var value unsafe.Pointer
		// getResourceValue:forKey:error: returns a BOOL: read full width (objcsafe.Bool).
		if objcsafe.Bool(url, "getResourceValue:forKey:error:", unsafe.Pointer(&value), foundation.URLVolumeAvailableCapacityForImportantUsageKey, unsafe.Pointer(nil)) && value != nil {
			n, ok = foundation.NumberFrom(value).LongLongValue(), true
		}
	})
	if ok && n > 0 {
		return n, nil
	}
	return statfsAvailable(dir)
}
