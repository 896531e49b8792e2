// Package serve is Easel's HTTP API, the AUTOMATIC1111 web UI's (`/sdapi/v1/...`), so that the
// artist's other tools (the Photoshop plugin, browser and chat front ends, bots, scripts, queue
// tools, another Easel window) can drive it. It speaks the API as A1111 does: its field names and defaults (except that absent
// generation settings take the model's own: its steps, CFG 1, its size), `info` as a JSON string,
// FastAPI/pydantic's 422 `detail` lists for a wrong type or range, unknown keys ignored, and what
// Easel cannot do said in the response rather than silently changed.
//
// A request becomes the same compose.Draft → pipeline.Request the window makes, and its images
// are jobs on the app's one queue (app/jobs), shared with the window when it serves: an API image
// equals `easel generate`'s with the same settings bit for bit, and carries the same metadata
// (app/imagefile). Batches (batch_size × n_iter) are sequential jobs, one seed each
// (Config.Spread lets a generator that renders elsewhere send them all out at once).
//
// The same server answers OpenAI's images API (app/serve/openai) and ComfyUI's routes for
// template clients (app/serve/comfy), both over render.Renderer, which Server implements with
// the same drafts and jobs (apis.go).
//
// Security: loopback only unless credentials or --allow-from networks are set (Check), HTTP
// Basic (A1111's --api-auth) or a bearer token compared in constant time, CORS only for the
// origins given, a body cap, the app's image limits,
// header/read/idle timeouts, a cap on concurrent connections, a bounded queue (503 with
// Retry-After), models and LoRAs chosen by name among the app's folders, never by path, and logs
// without prompts unless asked. The client side, for a window that renders on another machine, is
// app/serve/client.
package serve
