package serve

import (
	"path/filepath"
	"regexp"
	"strings"
)

// absPath finds an absolute file path in a sentence: a slash (or ~/) after a space, a quote, a
// bracket or an equals sign, up to the next space, quote, bracket or separator.
var absPath = regexp.MustCompile(`(^|[\s"'(\[=])(~?/[^\s"'()\[\]<>,;:]*[^\s"'()\[\]<>,;:.])`)

// noPaths is a sentence for a client with every absolute file path cut to its file name: an
// answer never tells where the server keeps its files (models, LoRAs, folders). The API's own
// routes (/sdapi/…) are left as they are.
func noPaths(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	return absPath.ReplaceAllStringFunc(s, func(m string) string {
		sub := absPath.FindStringSubmatch(m)
		lead, p := sub[1], sub[2]
		if strings.HasPrefix(p, "/sdapi/") || strings.HasPrefix(p, "/sdapi") && len(p) == len("/sdapi") {
			return m
		}
		return lead + filepath.Base(p)
	})
}

// noPathsAll is noPaths over a list.
func noPathsAll(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = noPaths(s)
	}
	return out
}
