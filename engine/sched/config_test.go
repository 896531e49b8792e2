package sched

import (
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name    string
		json    string
		want    func(*Config)
		wantErr string
	}{
		{name: "empty object keeps every default", json: `{}`, want: func(*Config) {}},
		{name: "absent keys keep defaults", json: `{"max_shift": 1.15, "base_image_seq_len": 128}`,
			want: func(c *Config) { c.MaxShift = 1.15; c.BaseImageSeqLen = 128 }},
		{name: "null shift_terminal turns the stretch off", json: `{"shift_terminal": null}`,
			want: func(c *Config) { c.ShiftTerminal = 0 }},
		{name: "null elsewhere keeps the default", json: `{"max_shift": null}`, want: func(*Config) {}},
		{name: "static shift", json: `{"use_dynamic_shifting": false, "shift": 3.0}`,
			want: func(c *Config) { c.UseDynamicShifting = false; c.Shift = 3 }},
		{name: "not JSON", json: `{`, wantErr: "not a JSON object"},
		{name: "wrong type", json: `{"base_shift": "half"}`, wantErr: "wrong type"},
		{name: "karras", json: `{"use_karras_sigmas": true}`, wantErr: "Karras"},
		{name: "unknown shift type", json: `{"time_shift_type": "cosine"}`, wantErr: "time_shift_type"},
		{name: "stochastic", json: `{"stochastic_sampling": true}`, wantErr: "stochastic_sampling"},
		{name: "degenerate line", json: `{"base_image_seq_len": 256, "max_image_seq_len": 256}`, wantErr: "two different lengths"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.json))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := DefaultConfig()
			tc.want(&want)
			if got != want {
				t.Errorf("got %+v\nwant %+v", got, want)
			}
		})
	}
}
