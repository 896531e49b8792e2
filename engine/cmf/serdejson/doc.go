// Package serdejson writes JSON byte-compatible with Rust's serde_json as cortiq writes it, so
// that files Easel produces (CMF headers, config tensors) match cortiq's byte for byte
// (docs/reference/cmf.md §3 and §10.3):
//
//   - FormatFloat prints an f64 or f32 in ryu's shortest form, as serde_json does ("1e-6",
//     "10000.0", "0.000001" for an f32).
//   - Marshal and MarshalPretty write a serde_json::Value: object keys sorted (its map is a
//     BTreeMap), integers as written, floats through FormatFloat, strings escaped minimally
//     (quote, backslash and control characters only); compact (to_vec) or with two-space
//     indentation (to_vec_pretty). Parse reads such values keeping numbers as written.
//   - DecodeObject and EncodeObject read and write one object as ordered fields with verbatim
//     values, for serde structs whose keys come in declaration order and whose unknown keys
//     must survive a rewrite unchanged.
//
// MarshalStdlib is encoding/json without HTML escaping, for typed Go values. Its string escaping
// differs from serde_json's on U+2028, U+2029 and invalid UTF-8 (see its comment); the CMF header
// writer uses it, so its keys and typed values keep the bytes Easel has always written until that
// difference is settled.
package serdejson
