// Package studiogen renders pipeline requests on a studio of Macs (app/studio): a jobs.Generator
// that sends each image of a request as a studio job (its prompt, settings and seeds; its images,
// noise and LoRA files stored once in the hub) and collects the workers' PNGs. `easel serve
// --studio` and the window's "Render on: studio" use it; the workers' side is app/cli's renderer.
// No Fyne.
package studiogen
