//go:build darwin

package desktop

import (
	"errors"
	"unsafe"

	"github.com/progrium/darwinkit/macos/foundation"

	"easel/engine/objcsafe"
)

// trashItem is NSFileManager trashItemAtURL:resultingItemURL:error:: the Finder's Trash for the
// file's volume, under a name the system picks; it returns the item's path in the Trash (Undo
// puts it back from there).
func trashItem(path string) (inTrash string, err error) {
	objcsafe.WithPool(func() { // the URLs and the NSError are autoreleased
		fm := foundation.FileManager_DefaultManager()
		url := foundation.URL_FileURLWithPath(path)
		var result, nsErr unsafe.Pointer
		// The result is a BOOL: read full width (objcsafe.Bool), not through darwinkit's wrapper.
		if !objcsafe.Bool(fm, "trashItemAtURL:resultingItemURL:error:", url, unsafe.Pointer(&result), unsafe.Pointer(&nsErr)) {
			msg := "the Finder's Trash refused it"
			if nsErr != nil {
				msg = foundation.ErrorFrom(nsErr).LocalizedDescription()
			}
			err = errors.New(msg)
			return
		}
		if result != nil {
			inTrash = foundation.URLFrom(result).Path()
		}
	})
	return inTrash, err
}
