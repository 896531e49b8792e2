//go:build !darwin

package freespace

func available(dir string) (int64, error) { return statfsAvailable(dir) }
