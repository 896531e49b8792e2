package modelsetup

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"easel/app/download"
	"easel/app/download/downloadtest"
	"easel/app/settings"
	"easel/engine/cmf"
	"easel/engine/convert"
	"easel/internal/golden"
)

func tinySnapshot(t *testing.T) string {
	t.Helper()
	dir, err := golden.ModelSnapshot()
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// convertTiny converts the tiny snapshot once per test binary; tests that only read the result
// share it.
var tiny struct {
	once sync.Once
	path string
	err  error
}

func convertedTiny(t *testing.T) string {
	t.Helper()
	tiny.once.Do(func() {
		dir, err := os.MkdirTemp("", "modelsetup-tiny")
		if err != nil {
			tiny.err = err
			return
		}
		snap, err := golden.ModelSnapshot()
		if err != nil {
			tiny.err = err
			return
		}
		tiny.path = filepath.Join(dir, "tiny.cmf")
		_, tiny.err = ConvertSnapshot(context.Background(), snap, tiny.path, convert.ProfileCortiq, nil)
	})
	if tiny.err != nil {
		t.Fatal(tiny.err)
	}
	return tiny.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if tiny.path != "" {
		os.RemoveAll(filepath.Dir(tiny.path))
	}
	os.Exit(code)
}

func TestConvertSnapshotThenOpen(t *testing.T) {
	out := filepath.Join(t.TempDir(), "models", "tiny.cmf") // the models folder does not exist yet
	var last convert.Progress
	calls := 0
	m, err := ConvertSnapshot(context.Background(), tinySnapshot(t), out, convert.ProfileCortiq, func(p convert.Progress) {
		last = p
		calls++
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Path != out || m.QuantType != "Q4_BLOCK" || !m.Vision || m.Tensors == 0 {
		t.Errorf("model = %+v; want %s, Q4_BLOCK, with the vision tower", m, out)
	}
	st, err := os.Stat(out)
	if err != nil || st.Size() != m.Bytes {
		t.Fatalf("model file: %v, size %v, Check says %d", err, st, m.Bytes)
	}
	if calls == 0 || last.TensorsDone != last.TensorsTotal || last.BytesDone != last.BytesTotal {
		t.Errorf("last progress %+v after %d calls; want everything done", last, calls)
	}
	if err := Verify(context.Background(), out, nil); err != nil {
		t.Errorf("Verify of a fresh conversion: %v", err)
	}
}

func TestCancelledConversionLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "tiny.cmf")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := ConvertSnapshot(ctx, tinySnapshot(t), out, convert.ProfileCortiq, func(p convert.Progress) {
		if p.TensorsDone > 0 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		t.Errorf("%s was left in the output folder", e.Name())
	}
}

func TestConversionReplacesAnUnfinishedEarlierOne(t *testing.T) {
	out := filepath.Join(t.TempDir(), "tiny.cmf")
	if err := os.WriteFile(out+".partial", make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ConvertSnapshot(context.Background(), tinySnapshot(t), out, convert.ProfileCortiq, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(out + ".partial"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the unfinished file is still there: %v", err)
	}
}

func TestCheckOpensAConvertedFile(t *testing.T) {
	m, err := Check(convertedTiny(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.QuantType != "Q4_BLOCK" {
		t.Errorf("quant type %q", m.QuantType)
	}
}

func TestCheckRefusesWhatCannotRun(t *testing.T) {
	good, err := os.ReadFile(convertedTiny(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cases := []struct {
		name    string
		want    error
		content []byte // nil: the file does not exist
	}{
		{"missing.cmf", fs.ErrNotExist, nil},
		{"photo.cmf", cmf.ErrNotCMF, []byte("\x89PNG\r\n\x1a\n not a model at all, just some bytes to fill an envelope............................................................................................")},
		{"truncated.cmf", cmf.ErrTruncated, good[:len(good)/2]},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if c.content != nil {
			if err := os.WriteFile(p, c.content, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Check(p)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("%s: err = %v; want one naming the file, of kind %q", c.name, err, c.want)
		}
	}
}

// rewrite copies the model file at src to dst, changing its header and leaving out one tensor.
func rewrite(t *testing.T, src, dst string, edit func(*cmf.Header), drop string) {
	t.Helper()
	f, err := cmf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cmf.Create(dst, cmf.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range f.Names() {
		if name == drop {
			continue
		}
		tn, err := f.Tensor(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.AddTensor(name, tn.DType, tn.Shape, tn.Data); err != nil {
			t.Fatal(err)
		}
	}
	h := *f.Header()
	h.SectionHashes = nil
	edit(&h)
	if err := w.SetHeader(h); err != nil {
		t.Fatal(err)
	}
	w.SetVocab(f.Vocab())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckRefusesOtherModelsAndIncompleteOnes(t *testing.T) {
	good := convertedTiny(t)
	dir := t.TempDir()
	llm := filepath.Join(dir, "llm.cmf")
	rewrite(t, good, llm, func(h *cmf.Header) { h.Arch.Name = "qwen3" }, "")
	if _, err := Check(llm); err == nil || !strings.Contains(err.Error(), `"qwen3", not Qwen-Image-2.1`) {
		t.Errorf("a text model: %v", err)
	}
	partial := filepath.Join(dir, "partial.cmf")
	rewrite(t, good, partial, func(*cmf.Header) {}, "dit.img_in.weight")
	if _, err := Check(partial); err == nil || !strings.Contains(err.Error(), "dit.img_in.weight") || !strings.Contains(err.Error(), "partial.cmf") {
		t.Errorf("a file without dit.img_in.weight: %v", err)
	}
	same := filepath.Join(dir, "same.cmf")
	rewrite(t, good, same, func(*cmf.Header) {}, "")
	if _, err := Check(same); err != nil {
		t.Errorf("an unchanged copy: %v", err)
	}
}

func TestUsableAndSaveModel(t *testing.T) {
	store := &settings.Store{Path: filepath.Join(t.TempDir(), "settings.json")}
	s, err := store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if err := Usable(s); !errors.Is(err, ErrNoModel) {
		t.Errorf("fresh settings: Usable = %v; want ErrNoModel", err)
	}
	s.Model = filepath.Join(t.TempDir(), "gone.cmf")
	if err := Usable(s); err == nil {
		t.Error("a missing model file is usable")
	}
	s.Backend = settings.BackendCPU
	if err := store.Save(s); err != nil {
		t.Fatal(err)
	}
	path := convertedTiny(t)
	if err := SaveModel(store, path); err != nil {
		t.Fatal(err)
	}
	s, err = store.Load()
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != path || s.Backend != settings.BackendCPU {
		t.Errorf("saved settings: model %q backend %q; want %q and the backend kept", s.Model, s.Backend, path)
	}
	if err := Usable(s); err != nil {
		t.Errorf("Usable after setup: %v", err)
	}
}

func TestInspectSnapshot(t *testing.T) {
	snap := tinySnapshot(t)
	out := filepath.Join(t.TempDir(), "tiny.cmf")
	s, err := InspectSnapshot(snap, convert.ProfileCortiq, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Components {
		if !c.Found || c.Files == 0 || c.Bytes == 0 {
			t.Errorf("component %+v; want found, with files", c)
		}
	}
	if s.Problem != nil || s.Estimate == nil || !s.Fits() || s.FreeBytes <= 0 {
		t.Fatalf("snapshot %+v; want convertible and fitting", s)
	}
	m, err := ConvertSnapshot(context.Background(), snap, out, convert.ProfileCortiq, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Bytes > s.Estimate.OutputBytes {
		t.Errorf("the model file has %d bytes, more than the estimate %d the disk check used", m.Bytes, s.Estimate.OutputBytes)
	}

	// A snapshot reached through a symlink (Hugging Face's cache is made of them) counts the
	// files it points at.
	link := filepath.Join(t.TempDir(), "snapshot")
	if err := os.Symlink(snap, link); err != nil {
		t.Fatal(err)
	}
	linked, err := InspectSnapshot(link, convert.ProfileCortiq, out)
	if err != nil {
		t.Fatal(err)
	}
	if linked.Bytes != s.Bytes || linked.Bytes < s.Estimate.SourceBytes {
		t.Errorf("through a symlink the snapshot holds %d bytes; directly %d (weights alone %d)", linked.Bytes, s.Bytes, s.Estimate.SourceBytes)
	}

	// A snapshot without its VAE is shown, with the reason it cannot be converted.
	partial := t.TempDir()
	for _, part := range []string{"model_index.json", "transformer", "text_encoder", "processor", "scheduler"} {
		if err := os.Symlink(filepath.Join(snap, part), filepath.Join(partial, part)); err != nil {
			t.Fatal(err)
		}
	}
	s, err = InspectSnapshot(partial, convert.ProfileCortiq, out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Problem == nil || !strings.Contains(s.Problem.Error(), "vae") || s.Fits() {
		t.Errorf("snapshot without vae/: problem %v, fits %v", s.Problem, s.Fits())
	}
	if _, err := InspectSnapshot(filepath.Join(snap, "model_index.json"), convert.ProfileCortiq, out); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("a file instead of a folder: %v", err)
	}

	// A folder with nothing of a snapshot (photographs, say) is called what it is, not a damaged
	// download.
	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, "holiday.jpg"), []byte("not a model"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err = InspectSnapshot(other, convert.ProfileCortiq, out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Problem == nil || !strings.Contains(s.Problem.Error(), "is not a model snapshot") || strings.Contains(s.Problem.Error(), "incomplete or damaged") || s.Fits() {
		t.Errorf("a folder that is not a snapshot: problem %v, fits %v", s.Problem, s.Fits())
	}
}

const licenseText = "Qwen RESEARCH LICENSE AGREEMENT\n\nNon-commercial use only.\n"

func startHub(t *testing.T) (*downloadtest.Hub, *download.Remote) {
	t.Helper()
	hub, err := downloadtest.NewHub(tinySnapshot(t), download.OfficialRepo, map[string][]byte{
		"LICENSE":        []byte(licenseText),
		"assets/big.png": make([]byte, 3<<20), // not wanted: samples are skipped
	})
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	t.Cleanup(stop)
	return hub, remote
}

func TestDownloadThenConvertThenOpen(t *testing.T) {
	_, remote := startHub(t)
	plan, err := PlanDownload(context.Background(), remote, convert.ProfileCortiq)
	if err != nil {
		t.Fatal(err)
	}
	if plan.License != licenseText || plan.LicenseFile != "LICENSE" {
		t.Errorf("license %q from %q", plan.License, plan.LicenseFile)
	}
	var want int64
	for _, f := range plan.Files {
		if strings.HasPrefix(f.Path, "assets/") {
			t.Errorf("%s is planned; sample images are not needed", f.Path)
		}
		want += f.Size
	}
	if plan.Bytes != want || plan.ModelBytes <= 0 || plan.NeedBytes() != plan.Bytes+plan.ModelBytes {
		t.Errorf("plan sizes: %d bytes (files sum to %d), model %d", plan.Bytes, want, plan.ModelBytes)
	}

	dest := filepath.Join(t.TempDir(), "downloads")
	out := filepath.Join(t.TempDir(), "models", "qwen.cmf")

	// Pause during the download (cancel), then resume by running again.
	ctx, pause := context.WithCancel(context.Background())
	_, err = DownloadAndConvert(ctx, plan, dest, out, func(p download.Progress) {
		if p.Bytes > 0 {
			pause()
		}
	}, nil)
	pause()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("paused download: err = %v; want context.Canceled", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a model file exists after a paused download")
	}
	var lastDownload download.Progress
	var converted bool
	m, err := DownloadAndConvert(context.Background(), plan, dest, out,
		func(p download.Progress) { lastDownload = p },
		func(p convert.Progress) { converted = true })
	if err != nil {
		t.Fatal(err)
	}
	if lastDownload.Bytes != plan.Bytes || lastDownload.Done != len(plan.Files) || !converted {
		t.Errorf("last download progress %+v, converted %v; want all %d bytes and a conversion", lastDownload, converted, plan.Bytes)
	}
	if _, err := Check(m.Path); err != nil || m.Path != out {
		t.Errorf("downloaded model %s: %v", m.Path, err)
	}
}

func TestPlanDownloadWithoutLicenseSaysWhereToReadIt(t *testing.T) {
	hub, err := downloadtest.NewHub(tinySnapshot(t), download.OfficialRepo, nil)
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	defer stop()
	_, err = PlanDownload(context.Background(), remote, convert.ProfileCortiq)
	if err == nil || !strings.Contains(err.Error(), "license") || !strings.Contains(err.Error(), download.OfficialRepo) {
		t.Errorf("err = %v; want one about the license naming the repository", err)
	}
}

func TestEstimateModelBytesOrdersProfiles(t *testing.T) {
	// The official repository's sizes (qi21-spec §11.1): DiT 14.2 GB bf16, text encoder 17.5 GB
	// bf16, VAE 1.35 GB f32.
	files := []download.File{
		{Path: "transformer/diffusion_pytorch_model-00001-of-00002.safetensors", Size: 10e9},
		{Path: "transformer/diffusion_pytorch_model-00002-of-00002.safetensors", Size: 4.2e9},
		{Path: "text_encoder/model-00001-of-00004.safetensors", Size: 17.5e9},
		{Path: "vae/diffusion_pytorch_model.safetensors", Size: 1.35e9},
		{Path: "processor/tokenizer.json", Size: 11e6},
	}
	cortiq := EstimateModelBytes(files, convert.ProfileCortiq)
	q8 := EstimateModelBytes(files, convert.ProfileQ8)
	f16 := EstimateModelBytes(files, convert.ProfileF16)
	if !(cortiq < q8 && q8 < f16) {
		t.Errorf("estimates cortiq %d, q8 %d, f16 %d; want increasing", cortiq, q8, f16)
	}
	if cortiq < 12e9 || cortiq > 15e9 {
		t.Errorf("cortiq estimate %s; cortiq's files are about 13 GB", FormatBytes(cortiq))
	}
}

func TestFormat(t *testing.T) {
	cases := []struct{ got, want string }{
		{FormatBytes(999), "999 bytes"},
		{FormatBytes(4_542_280), "4.5 MB"},
		{FormatBytes(31_050_000_000), "31 GB"},
		{FormatETA(0), ""},
		{FormatETA(30e9), "less than a minute left"},
		{FormatETA(3*60e9 + 10e9), "about 3 min left"},
		{FormatETA(2*3600e9 + 5*60e9), "about 2 h 5 min left"},
		{DescribeConversion(convert.Progress{TensorsDone: 3, TensorsTotal: 10, BytesDone: 2e6, BytesTotal: 8e6, Elapsed: 1e9}),
			"3 of 10 tensors · 2.0 MB of 8.0 MB · 2.0 MB/s · less than a minute left"},
		{DescribeDownload(download.Progress{Bytes: 5e9, Total: 31e9, Done: 2, Files: 12, Rate: 50e6, ETA: 520e9}),
			"5.0 GB of 31 GB · 2 of 12 files · 50.0 MB/s · about 9 min left"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q; want %q", c.got, c.want)
		}
	}
}

func TestDefaultModelPathIsInTheAppSupportFolder(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	p, err := DefaultModelPath(convert.ProfileQ8)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := settings.Dir()
	if p != filepath.Join(dir, "models", "qwen-image-2.1-q8.cmf") {
		t.Errorf("default model path %s", p)
	}
}

func TestOfficialRemoteHonoursTheMirrorVariable(t *testing.T) {
	t.Setenv(EndpointEnv, "")
	if r := OfficialRemote(); r.BaseURL != download.DefaultBaseURL || r.Repo != download.OfficialRepo {
		t.Errorf("without %s: %+v", EndpointEnv, r)
	}
	t.Setenv(EndpointEnv, "https://hf-mirror.example")
	if r := OfficialRemote(); r.BaseURL != "https://hf-mirror.example" {
		t.Errorf("with %s: %+v", EndpointEnv, r)
	}
}

func TestHeldDownloadPausesAndResumes(t *testing.T) {
	hub, err := downloadtest.NewHub(tinySnapshot(t), download.OfficialRepo, map[string][]byte{"LICENSE": []byte(licenseText)})
	if err != nil {
		t.Fatal(err)
	}
	remote, stop := hub.Start()
	defer stop()
	plan, err := PlanDownload(context.Background(), remote, convert.ProfileCortiq)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "downloads")
	out := filepath.Join(t.TempDir(), "qwen.cmf")
	held := hub.Hold()
	ctx, pause := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := DownloadAndConvert(ctx, plan, dest, out, nil, nil)
		errc <- err
	}()
	select {
	case <-held: // pause while a file request is in flight
	case <-time.After(time.Minute):
		t.Fatal("the download never asked the hub for a file")
	}
	pause()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("paused: %v", err)
	}
	hub.Release()
	if _, err := DownloadAndConvert(context.Background(), plan, dest, out, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRequireSpaceSaysWhatIsNeededAndFree(t *testing.T) {
	out := filepath.Join(t.TempDir(), "models", "big.cmf") // the folder does not exist yet
	err := requireSpace(out, 1<<62, "the model file")
	if !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "4611686 TB") || !strings.Contains(err.Error(), "free") {
		t.Errorf("err = %v; want ErrNoSpace with the size needed and the free space", err)
	}
	if err := requireSpace(out, 1, "the model file"); err != nil {
		t.Errorf("one byte: %v", err)
	}
}
