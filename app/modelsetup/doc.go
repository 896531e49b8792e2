// Package modelsetup gets an artist from "no model" to a model file Easel can run, without a
// window: it checks a .cmf someone already has (cortiq's files open as they are), converts a
// downloaded Hugging Face snapshot into one, or downloads the official repository and converts
// that, checking disk space before each long step and saving the result in the settings. The
// first-run window (ui) drives these functions; every one of them is usable and tested without it.
package modelsetup
