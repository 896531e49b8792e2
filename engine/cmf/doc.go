// Package cmf reads, writes and verifies CMF v2 model containers, bit-compatible with cortiq
// (docs/reference/cmf.md): a 128-byte envelope, a JSON header, a binary tensor directory and a
// page-aligned weight blob, plus an optional vocab section holding tokenizer.json.
//
// Reading maps the file once (engine/mmapfile) and validates every structural field before
// anything is allocated from it; a tensor is a byte slice into the mapping, never a copy, and
// *File is a quant.Source. Hashes are checked on demand by Verify, as cortiq does.
//
// Writing streams: Create reserves head space, AddTensor appends payloads one at a time with
// cortiq's alignment rules and hashes, and Close patches the envelope, header and directory into
// the reserved head and renames the finished file into place, so a converter holds one tensor at a
// time and a half-written file never carries the final name.
package cmf
