package modelsetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"easel/app/download"
	"easel/engine/convert"
)

// DownloadPlan is what downloading the official repository involves, shown to the artist before
// anything is downloaded: the files, their size, the license and the size of the model file the
// download becomes.
type DownloadPlan struct {
	Remote      *download.Remote
	Files       []download.File // the files a conversion needs (download.Wanted)
	Bytes       int64           // their total size
	LicenseFile string          // the repository file License came from
	License     string
	Profile     convert.Profile
	ModelBytes  int64 // the converted model file's size, estimated from the file sizes
}

// NeedBytes is the disk space the whole setup takes: the snapshot and the model file.
func (p *DownloadPlan) NeedBytes() int64 { return p.Bytes + p.ModelBytes }

// licenseFiles are tried in order for the license text; a repository without any is shown its
// README, which states the license in its model card.
var licenseFiles = []string{"LICENSE", "LICENSE.txt", "LICENSE.md", "README.md"}

// PlanDownload lists the repository, keeps the files a conversion needs and fetches the license
// text.
func PlanDownload(ctx context.Context, remote *download.Remote, profile convert.Profile) (*DownloadPlan, error) {
	all, err := remote.List(ctx)
	if err != nil {
		return nil, err
	}
	p := &DownloadPlan{Remote: remote, Files: download.Wanted(all), Profile: profile}
	if len(p.Files) == 0 {
		return nil, fmt.Errorf("the repository %s lists no model files: check the repository name, or download the snapshot yourself and convert it", remote.Repo)
	}
	for _, f := range p.Files {
		p.Bytes += f.Size
	}
	p.ModelBytes = EstimateModelBytes(p.Files, profile)
	if p.LicenseFile, p.License, err = FetchLicense(ctx, remote, all); err != nil {
		return nil, err
	}
	return p, nil
}

// FetchLicense reads the license text of a repository whose files are all (its listing): the
// first of LICENSE, LICENSE.txt, LICENSE.md and README.md (a model card states its license) that
// is listed and is text. It returns the file's name and its text, or an error saying where to
// read the license instead.
func FetchLicense(ctx context.Context, remote *download.Remote, all []download.File) (file, text string, err error) {
	listed := map[string]bool{}
	for _, f := range all {
		listed[f.Path] = true
	}
	var fetchErr error
	for _, name := range licenseFiles {
		if !listed[name] {
			continue
		}
		b, err := remote.Fetch(ctx, name, 1<<20)
		if err != nil {
			fetchErr = err
			continue
		}
		if !utf8.Valid(b) {
			continue
		}
		return name, string(b), nil
	}
	if fetchErr == nil {
		fetchErr = errors.New("the repository has no LICENSE or README.md")
	}
	return "", "", fmt.Errorf("cannot show the license of %s (%v): read it on %s/%s before downloading its files yourself",
		remote.Repo, fetchErr, remote.BaseURL, remote.Repo)
}

// modelRatios are how many bytes of the converted file one byte of each component's weights
// becomes, per profile: bf16 → q4tp is 0.26 and bf16 → q8_2f 0.50 (engine/quant's payload sizes),
// rounded up for the tensors each profile keeps at the source's precision; the VAE's f32 weights
// become f16 (0.5) except in the f16 profile, which keeps them.
var modelRatios = map[convert.Profile]map[string]float64{
	convert.ProfileCortiq: {"transformer": 0.28, "text_encoder": 0.51, "vae": 0.51},
	convert.ProfileQ8:     {"transformer": 0.51, "text_encoder": 0.51, "vae": 0.51},
	convert.ProfileF16:    {"transformer": 1, "text_encoder": 1, "vae": 1},
}

// EstimateModelBytes estimates the model file a conversion of files (a repository listing) with
// profile writes, before anything is downloaded; the exact bound is known once the snapshot is
// on disk (InspectSnapshot).
func EstimateModelBytes(files []download.File, profile convert.Profile) int64 {
	ratios, ok := modelRatios[profile]
	if !ok {
		ratios = modelRatios[convert.ProfileCortiq]
	}
	var total float64
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".safetensors") {
			continue
		}
		dir, _, _ := strings.Cut(f.Path, "/")
		if r, ok := ratios[dir]; ok {
			total += r * float64(f.Size)
		}
	}
	const head = 16 << 20 // header, directory, tokenizer, alignment
	return int64(total) + head
}

// presentBytes is how much of the plan is already in dest: complete files and partial ones.
func presentBytes(dest string, files []download.File) int64 {
	var n int64
	for _, f := range files {
		p := filepath.Join(dest, filepath.FromSlash(path.Clean(f.Path)))
		if st, err := os.Stat(p); err == nil {
			n += min(st.Size(), f.Size)
		} else if st, err := os.Stat(p + ".part"); err == nil {
			n += min(st.Size(), f.Size)
		}
	}
	return n
}

// Download fetches the plan's files into dest, after checking that the disk can hold what is
// left of the download and the model file it becomes. Cancelling ctx pauses: partial files stay,
// and calling Download again resumes them. progress may be nil.
func Download(ctx context.Context, plan *DownloadPlan, dest string, progress func(download.Progress)) error {
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return fmt.Errorf("cannot create the download folder %s: %v", dest, err)
	}
	left := plan.Bytes - presentBytes(dest, plan.Files)
	if err := requireSpace(filepath.Join(dest, "x"), left+plan.ModelBytes, "the download and the model file"); err != nil {
		return err
	}
	d := &download.Downloader{Remote: plan.Remote, Dest: dest, Progress: progress}
	return d.Run(ctx, plan.Files)
}

// DownloadAndConvert downloads the plan into dest (resuming what is there), converts it into out
// with the plan's profile and checks the result. Cancelling ctx during the download pauses it
// (call again to resume); during the conversion it leaves no model file.
func DownloadAndConvert(ctx context.Context, plan *DownloadPlan, dest, out string, onDownload func(download.Progress), onConvert func(convert.Progress)) (*Model, error) {
	if err := Download(ctx, plan, dest, onDownload); err != nil {
		return nil, err
	}
	return ConvertSnapshot(ctx, dest, out, plan.Profile, onConvert)
}

// EndpointEnv names the environment variable that points downloads at a Hugging Face mirror,
// as Hugging Face's own tools do (e.g. HF_ENDPOINT=https://hf-mirror.com).
const EndpointEnv = "HF_ENDPOINT"

// OfficialRemote is the official Qwen-Image-2.1 repository on the Hugging Face hub, or on the
// mirror EndpointEnv names.
func OfficialRemote() *download.Remote {
	base := download.DefaultBaseURL
	if e := strings.TrimSpace(os.Getenv(EndpointEnv)); e != "" {
		base = e
	}
	return &download.Remote{BaseURL: base, Repo: download.OfficialRepo}
}
