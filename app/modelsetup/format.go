package modelsetup

import (
	"fmt"
	"time"

	"easel/app/download"
	"easel/engine/convert"
)

// FormatBytes writes a size the way Finder does (decimal units): "12.7 GB", "340 MB", "5 kB".
func FormatBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d bytes", n)
	}
	f := float64(n)
	for _, u := range []string{"kB", "MB", "GB", "TB"} {
		f /= unit
		if f < unit || u == "TB" {
			if f < 10 {
				return fmt.Sprintf("%.1f %s", f, u)
			}
			return fmt.Sprintf("%.0f %s", f, u)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// FormatRate writes a transfer rate in MB/s.
func FormatRate(bytesPerSecond float64) string {
	return fmt.Sprintf("%.1f MB/s", bytesPerSecond/1e6)
}

// FormatETA writes the time left as "about 3 min left", or "" while there is no estimate.
func FormatETA(d time.Duration) string {
	switch {
	case d <= 0:
		return ""
	case d < time.Minute:
		return "less than a minute left"
	case d < time.Hour:
		return fmt.Sprintf("about %d min left", int(d.Round(time.Minute)/time.Minute))
	}
	return fmt.Sprintf("about %d h %d min left", int(d/time.Hour), int((d%time.Hour).Round(time.Minute)/time.Minute))
}

// DescribeConversion is one line of a conversion's progress: tensors, bytes, rate and time left.
func DescribeConversion(p convert.Progress) string {
	s := fmt.Sprintf("%d of %d tensors · %s of %s", p.TensorsDone, p.TensorsTotal,
		FormatBytes(p.BytesDone), FormatBytes(p.BytesTotal))
	if secs := p.Elapsed.Seconds(); secs > 0 && p.BytesDone > 0 {
		s += " · " + FormatRate(float64(p.BytesDone)/secs)
	}
	if eta := FormatETA(p.ETA()); eta != "" {
		s += " · " + eta
	}
	return s
}

// DescribeDownload is one line of a download's progress: bytes, files, rate and time left.
func DescribeDownload(p download.Progress) string {
	s := fmt.Sprintf("%s of %s · %d of %d files", FormatBytes(p.Bytes), FormatBytes(p.Total), p.Done, p.Files)
	if p.Rate > 0 {
		s += " · " + FormatRate(p.Rate)
	}
	if eta := FormatETA(p.ETA); eta != "" {
		s += " · " + eta
	}
	return s
}

// Fraction is done/total clamped to [0, 1], for progress bars.
func Fraction(done, total int64) float64 {
	if total <= 0 {
		return 0
	}
	return min(1, max(0, float64(done)/float64(total)))
}
