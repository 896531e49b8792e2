// Drives easel serve with a published AUTOMATIC1111 client, stable-diffusion-api (npm), as an
// artist's script would: options, txt2img while polling progress, img2img from its result,
// samplers, models and png-info. Prints one JSON summary line; the Go test judges it.
// usage: node check.js BASE_URL [USER PASS]
const { StableDiffusionApi } = require("stable-diffusion-api");

async function main() {
  const [baseUrl, user, pass] = process.argv.slice(2);
  const api = new StableDiffusionApi({ baseUrl, timeout: 120000 });
  if (user) api.setAuth(user, pass);
  const out = {};
  const options = await api.getOptions();
  out.model = options.sd_model_checkpoint;
  await api.setOptions({ sd_model_checkpoint: out.model });
  out.samplers = (await api.getSamplers()).map((s) => s.name);
  out.models = (await api.getSdModels()).map((m) => m.title);

  const running = api.txt2img({ prompt: "a lighthouse at dusk", width: 64, height: 64, steps: 6, seed: 42, batch_size: 2 });
  const progress = [];
  let done = false;
  running.finally(() => { done = true; });
  while (!done) {
    const p = await api.getProgress();
    progress.push({ progress: p.progress, step: p.state.sampling_step, image: typeof p.current_image === "string" });
    await new Promise((r) => setTimeout(r, 5));
  }
  const t2i = await running;
  out.progress = progress;
  out.txt2img = { count: t2i.images.length, info: JSON.parse(t2i.info), size: await t2i.image.metadata().then((m) => [m.width, m.height]) };

  const i2i = await api.img2img({ init_images: [t2i.image], prompt: "the same lighthouse at night", steps: 4, seed: 7 });
  out.img2img = { count: i2i.images.length, info: JSON.parse(i2i.info), size: await i2i.image.metadata().then((m) => [m.width, m.height]) };

  // The client re-encodes the image with sharp (which drops text chunks) before sending it.
  const info = await api.pngInfo(t2i.image);
  out.pngInfo = typeof info.info;
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  const status = err.response ? err.response.status : "";
  const body = err.response ? JSON.stringify(err.response.data) : "";
  console.error(`client error: ${err.message} ${status} ${body}`);
  process.exit(1);
});
