// Drives easel serve's OpenAI images API with the official SDK (openai, npm), as a program
// written against OpenAI would, pointed at another base URL with the server's token as its API
// key. Prints one JSON summary line; the Go test (app/serve/openai_client_test.go) judges it.
// usage: node check.js pictures|stream BASE_URL TOKEN DIR
//   pictures: generate (seed, steps, background transparent), edit with two images, edit with a
//             mask, a bad size and a missing prompt; the pictures are written into DIR.
//   stream:   generate with stream and partial_images; the events' types and indexes.
const fs = require("fs");
const path = require("path");
const { default: OpenAI, toFile } = require("openai");

async function refusal(call) {
  try {
    await call();
    return { status: 200 };
  } catch (e) {
    return { status: e.status, type: e.type, param: e.param, code: e.code, message: e.message, body: e.error };
  }
}

async function pictures(client, dir) {
  const out = {};
  const gen = await client.images.generate({
    model: "tiny", prompt: "a lighthouse at dusk", size: "64x64", background: "transparent",
    seed: 7, steps: 2,
  });
  fs.writeFileSync(path.join(dir, "generate.png"), Buffer.from(gen.data[0].b64_json, "base64"));
  out.generate = { count: gen.data.length, size: gen.size, background: gen.background, output_format: gen.output_format };

  const file = (name) => toFile(fs.createReadStream(path.join(dir, name)), name, { type: "image/png" });
  const edit = await client.images.edit({
    image: [await file("a.png"), await file("b.png")], prompt: "the two side by side", size: "64x64",
    seed: 9, steps: 2,
  });
  fs.writeFileSync(path.join(dir, "edit.png"), Buffer.from(edit.data[0].b64_json, "base64"));
  out.edit = { count: edit.data.length, size: edit.size, background: edit.background };

  const masked = await client.images.edit({
    image: await file("a.png"), mask: await file("mask.png"), prompt: "a red door", seed: 11, steps: 2,
  });
  fs.writeFileSync(path.join(dir, "masked.png"), Buffer.from(masked.data[0].b64_json, "base64"));
  out.masked = { count: masked.data.length, size: masked.size };

  out.badSize = await refusal(() => client.images.generate({ prompt: "x", size: "big" }));
  out.noPrompt = await refusal(() => client.images.generate({ size: "64x64" }));
  return out;
}

async function stream(client) {
  const events = [];
  const s = await client.images.generate({
    prompt: "a lighthouse at dusk", size: "64x64", stream: true, partial_images: 2, steps: 4, seed: 3,
  });
  for await (const ev of s) {
    events.push({ type: ev.type, index: ev.partial_image_index, size: ev.size, b64: (ev.b64_json || "").length > 0 });
  }
  return { events };
}

async function main() {
  const [mode, baseURL, token, dir] = process.argv.slice(2);
  const client = new OpenAI({ baseURL: baseURL + "/v1", apiKey: token, maxRetries: 0, timeout: 300000 });
  const out = mode === "stream" ? await stream(client) : await pictures(client, dir);
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
