package compose

import (
	"testing"

	"easel/app/settings"
	"easel/engine/lora"
)

func TestDraftAndFinalSwitchPresetAndFullSchedule(t *testing.T) {
	d := NewDraft(settings.Defaults())
	d.Steps, d.CFG = 40, 1
	turbo := &lora.Preset{Name: "Turbo", Steps: 8, CFG: 1, Schedule: "turbo"}
	d.UseDrafts("/loras/turbo.safetensors", turbo)
	if !d.Mode.On || d.Steps != 8 || d.Preset != turbo || len(d.LoRAs) != 1 || !d.LoRAs[0].Enabled || d.LoRAs[0].Strength != 1 {
		t.Fatalf("draft: mode %+v, steps %d, LoRAs %+v", d.Mode, d.Steps, d.LoRAs)
	}
	r, err := d.Request(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.LoRAFiles) != 1 || r.Sigmas == nil || r.Scheduler == nil {
		t.Errorf("draft request: LoRAs %+v, sigmas %v, scheduler %v", r.LoRAFiles, r.Sigmas, r.Scheduler)
	}
	// Switching again keeps the final pass's settings, not the preset's.
	d.UseDrafts("/loras/turbo.safetensors", turbo)
	d.UseFinal()
	if d.Mode.On || d.Steps != 40 || d.Preset != nil || d.LoRAs[0].Enabled {
		t.Fatalf("final: mode %+v, steps %d, preset %v, LoRAs %+v", d.Mode, d.Steps, d.Preset, d.LoRAs)
	}
	r, err = d.Request(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.LoRAFiles) != 0 || r.Sigmas != nil || r.Scheduler != nil || r.Steps != 40 {
		t.Errorf("final request: LoRAs %+v, sigmas %v, scheduler %v, steps %d", r.LoRAFiles, r.Sigmas, r.Scheduler, r.Steps)
	}
	d.UseFinal() // already final: nothing changes
	if d.Steps != 40 {
		t.Errorf("a second Final changed the steps to %d", d.Steps)
	}
}
