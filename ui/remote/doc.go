// Package remote is the window's remote work without the window: where jobs render (Router: this
// Mac, another Easel's server, or a studio), the fields a Studio dialog section asks for (a hub's
// address, a token of at least 16 characters, its pairing), the Studio panel of the Macs that
// joined, and the errors of all of them said in plain words. The shell (ui) builds the dialog and
// wires these to the queue and the settings.
package remote
