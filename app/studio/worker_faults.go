package studio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// errStoreFull is a store without room for a put.
var errStoreFull = errors.New("maximum bytes exceeded")

// roomFor checks that the store has room for size bytes more, so that a put that cannot fit is
// not begun (a put refused half way leaves work behind). Another put may still take the room
// meanwhile: the put's own error covers that.
func roomFor(ctx context.Context, obs jetstream.ObjectStore, size int) error {
	st, err := obs.Status(ctx)
	if err != nil {
		return nil // the put says what is wrong
	}
	bs, ok := st.(*jetstream.ObjectBucketStatus)
	if !ok || bs.StreamInfo() == nil {
		return nil
	}
	info := bs.StreamInfo()
	if info.Config.MaxBytes > 0 && int64(info.State.Bytes)+int64(size)+int64(size)/64+1024 > info.Config.MaxBytes {
		return fmt.Errorf("%w: %s of %s used", errStoreFull, sizeText(int64(info.State.Bytes)), sizeText(info.Config.MaxBytes))
	}
	return nil
}

// storeFault says why a put on the hub failed: a full store is the hub's disk (its share of it,
// DiskShare), said plainly, so the client, the worker and the hub's log all name it.
func storeFault(what string, size int, err error) string {
	msg := err.Error()
	low := strings.ToLower(msg)
	if strings.Contains(low, "maximum bytes") || strings.Contains(low, "insufficient") || strings.Contains(low, "resources") ||
		strings.Contains(low, "no space") {
		return fmt.Sprintf("the hub's disk has no room for %s (%s): its share of the disk is full (%s); free space on the hub's disk, or start it with a larger --max-store", what, sizeText(int64(size)), msg)
	}
	return fmt.Sprintf("the hub could not store %s (%s): %s", what, sizeText(int64(size)), msg)
}

// putWhole stores an object, or nothing: when the put fails the object store gives back the
// chunks it stored, but its record of the object may have gone out already, so that goes too
// (a reader would wait for chunks that are not there).
func putWhole(ctx context.Context, obs jetstream.ObjectStore, meta jetstream.ObjectMeta, data []byte) error {
	_, err := obs.Put(ctx, meta, bytes.NewReader(data))
	if err != nil {
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		obs.Delete(dctx, meta.Name)
		cancel()
	}
	return err
}

// absPathRE is an absolute path in a message (a Unix path of two parts or more).
var absPathRE = regexp.MustCompile(`(^|[\s"'(=:])(/[^\s"'():]+)+/([^\s"'():/]+)`)

// scrubPaths keeps only the base name of every absolute path in a message that goes to the
// client: nothing of the worker's file system leaves it.
func scrubPaths(msg string) string {
	return absPathRE.ReplaceAllString(msg, "${1}${3}")
}
