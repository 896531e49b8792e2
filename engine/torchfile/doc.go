// Package torchfile reads the tensors of a PyTorch checkpoint (`torch.save`, PyTorch ≥ 1.6: a zip
// holding data.pkl and data/<key> storages) without running any of its code.
//
// A pickle is a small program: its GLOBAL opcodes name Python callables and REDUCE calls them, which
// is how a hostile .pth file runs os.system on the machine of whoever loads it with torch.load. This
// reader is its own pickle interpreter with no Python behind it: a global is only a name, and only
// the names on the allow-list (allowlist.go) — the ones that rebuild tensors and ordered dicts, as
// torch's own weights_only loader allows — may appear at all. Any other global (os.system,
// builtins.eval, a model class) stops the read with an error that names it; nothing is called.
//
// Old checkpoints (before PyTorch 1.6: a bare pickle stream followed by the storages) are refused
// with a sentence saying how to re-save them.
package torchfile
