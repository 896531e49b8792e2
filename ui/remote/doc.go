// Package remote is the window's remote work in one place, without the window: where its jobs
// render (Router: this Mac, another Easel's server, or a studio), sharing this Mac's queue with
// other machines (Settings → Share this Mac) and the indicator that says both, the offer to
// render a job here when the machine it rendered on went away, and the Studio dialog — this Mac
// as the studio's hub with the panel of the Macs that joined, rendering on a studio, lending this
// Mac to one (a session per lending, its model file checked first), and what the dialog was
// given, remembered. Every error is said in plain words (errors.go). Work holds it all; the
// shell (ui) builds it with a Shell of functions and the window's model (ui/model), places its
// widgets and calls its actions. It imports ui/model and app/, never ui.
package remote
