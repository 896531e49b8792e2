// Package objcsafe reads Objective-C results the ways darwinkit v0.5.0's objc.Call cannot read
// them safely, and runs autorelease pools no Go panic can cross. It is darwin-only code (this
// file only documents it elsewhere); `make darwin-check` type-checks it on Linux and its lint
// (internal/darwincheck) sends every other call to these helpers:
//
//   - NSArray results: darwinkit converts an NSArray into a Go slice with to_c_array
//     (objc/type_convertion.m), which never sets the length of an empty array, and Metal returns
//     empty arrays (no underlying errors, no counter sets). Array takes the raw object and asks
//     its count before reading any element.
//   - BOOL and other results narrower than 8 bytes: objc.Call passes the Go variable to libffi as
//     the return buffer, and libffi writes a whole ffi_arg (8 bytes) for a small integer
//     result, overwriting whatever follows a 1-byte bool. Bool reads the result as a uint64 and
//     keeps its low byte (Objective-C's BOOL on arm64 is a 1-byte bool in the low bits of x0).
//   - A Go panic inside objc.WithAutoreleasePool unwinds through the pool's C frame without
//     popping it. WithPool recovers inside the pool, lets it pop, and panics again outside.
package objcsafe
