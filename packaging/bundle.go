// Package packaging finishes and checks the macOS .app bundle that `fyne package` assembles:
// the fyne CLI writes a generic Info.plist (minimum macOS 10.11); Easel needs macOS 14 on Apple
// silicon for its Metal denoiser, and a Finder-launched app needs the local-network usage
// description for Share and Render on to reach the LAN. The same checks run in CI on Linux against
// a bundle assembled from a stand-in binary. (package.sh signs the finished bundle ad hoc on a Mac.)
package packaging

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// MinimumMacOS is the oldest macOS Easel runs on (Metal 3 features, Apple silicon).
const MinimumMacOS = "14.0"

// plistString sets a <key>k</key><string>v</string> pair in the top-level dict of an XML plist,
// replacing an existing value or adding the pair before the closing </dict>.
func plistString(doc, key, value string) string {
	re := regexp.MustCompile(`(<key>` + regexp.QuoteMeta(key) + `</key>\s*)<string>[^<]*</string>`)
	if re.MatchString(doc) {
		return re.ReplaceAllString(doc, "${1}<string>"+value+"</string>")
	}
	return insertBeforeLastDictEnd(doc, "\t<key>"+key+"</key>\n\t<string>"+value+"</string>\n")
}

// plistBool sets <key>k</key><true/> or <false/>.
func plistBool(doc, key string, value bool) string {
	v := "<false/>"
	if value {
		v = "<true/>"
	}
	re := regexp.MustCompile(`(<key>` + regexp.QuoteMeta(key) + `</key>\s*)<(true|false)/>`)
	if re.MatchString(doc) {
		return re.ReplaceAllString(doc, "${1}"+v)
	}
	return insertBeforeLastDictEnd(doc, "\t<key>"+key+"</key>\n\t"+v+"\n")
}

func insertBeforeLastDictEnd(doc, fragment string) string {
	i := strings.LastIndex(doc, "</dict>")
	if i < 0 {
		return doc
	}
	return doc[:i] + fragment + doc[i:]
}

// LocalNetworkUsage is the NSLocalNetworkUsageDescription: macOS 15 and later silently deny LAN
// traffic to a Finder-launched app without it ("Share this Mac" and "Render on host:port").
const LocalNetworkUsage = "Easel uses the local network when you share this Mac as an image server or render on another Mac."

// Easel declares no document types: opening a .cmf from Finder does nothing yet (the model is
// chosen in the first-run window or Settings), so the bundle must not claim to open one.

// FinishInfoPlist rewrites Contents/Info.plist of the bundle at app: the minimum macOS version,
// high-resolution support, Apple-silicon-only architecture priority, the graphics category and the
// local-network usage description. Running it twice changes nothing more.
func FinishInfoPlist(app string) error {
	path := filepath.Join(app, "Contents", "Info.plist")
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading the bundle's Info.plist: %w (is %s a .app made by `fyne package`?)", err, app)
	}
	doc := string(b)
	doc = plistString(doc, "LSMinimumSystemVersion", MinimumMacOS)
	doc = plistBool(doc, "NSHighResolutionCapable", true)
	doc = plistString(doc, "LSApplicationCategoryType", "public.app-category.graphics-design")
	doc = plistBool(doc, "LSRequiresNativeExecution", true)
	doc = plistString(doc, "NSLocalNetworkUsageDescription", LocalNetworkUsage)
	return os.WriteFile(path, []byte(doc), 0o644)
}

// CheckBundle verifies a finished bundle's structure: the executable named by the plist is present
// and executable, the icon is there, and the plist carries the ID, version and settings Easel needs.
func CheckBundle(app, wantID, wantVersion string) error {
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	b, err := os.ReadFile(filepath.Join(app, "Contents", "Info.plist"))
	if err != nil {
		return fmt.Errorf("%s has no Contents/Info.plist: %w", app, err)
	}
	doc := string(b)
	value := func(key string) string {
		m := regexp.MustCompile(`<key>` + regexp.QuoteMeta(key) + `</key>\s*<string>([^<]*)</string>`).FindStringSubmatch(doc)
		if m == nil {
			return ""
		}
		return m[1]
	}
	isTrue := func(key string) bool {
		return regexp.MustCompile(`<key>` + regexp.QuoteMeta(key) + `</key>\s*<true/>`).MatchString(doc)
	}
	if v := value("CFBundleIdentifier"); v != wantID {
		bad("CFBundleIdentifier is %q, want %q", v, wantID)
	}
	if v := value("CFBundleShortVersionString"); v != wantVersion {
		bad("CFBundleShortVersionString is %q, want %q", v, wantVersion)
	}
	if v := value("LSMinimumSystemVersion"); v != MinimumMacOS {
		bad("LSMinimumSystemVersion is %q, want %q (run FinishInfoPlist)", v, MinimumMacOS)
	}
	if !isTrue("NSHighResolutionCapable") {
		bad("NSHighResolutionCapable is not true")
	}
	if value("NSLocalNetworkUsageDescription") == "" {
		bad("NSLocalNetworkUsageDescription is missing: a Finder-launched Easel is denied the local network on macOS 15+ (run FinishInfoPlist)")
	}
	if strings.Contains(doc, "<key>CFBundleDocumentTypes</key>") {
		bad("CFBundleDocumentTypes is declared, but Easel opens no document from Finder")
	}
	exe := value("CFBundleExecutable")
	if exe == "" {
		bad("CFBundleExecutable is missing")
	} else if st, err := os.Stat(filepath.Join(app, "Contents", "MacOS", exe)); err != nil {
		bad("the executable Contents/MacOS/%s is missing: %v", exe, err)
	} else if st.Mode()&0o111 == 0 {
		bad("Contents/MacOS/%s is not executable", exe)
	}
	icon := value("CFBundleIconFile")
	if st, err := os.Stat(filepath.Join(app, "Contents", "Resources", icon)); icon == "" || err != nil || st.Size() == 0 {
		bad("the icon Contents/Resources/%q is missing or empty", icon)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not a sound Easel bundle:\n  %s", app, strings.Join(problems, "\n  "))
	}
	return nil
}
