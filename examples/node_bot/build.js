// `npm run build`: bot.js and its node_modules bundled into one file, dist/bot.js, with the
// .proto files beside it in dist/proto. The bot's directory then runs without node_modules,
// which a submitted bot never holds (a league stores and sandboxes it like a Python bot).
"use strict";

const fs = require("fs");
const path = require("path");
const esbuild = require("esbuild");

const here = __dirname;
const protos = path.join(here, "..", "..", "proto", "sixnimmt", "v1");
const out = path.join(here, "dist");

fs.rmSync(out, { recursive: true, force: true });
esbuild.buildSync({
  entryPoints: [path.join(here, "bot.js")],
  bundle: true,
  platform: "node",
  target: "node18",
  outfile: path.join(out, "bot.js"),
  logLevel: "warning",
});
fs.mkdirSync(path.join(out, "proto", "sixnimmt", "v1"), { recursive: true });
for (const name of fs.readdirSync(protos).filter((n) => n.endsWith(".proto"))) {
  fs.copyFileSync(path.join(protos, name), path.join(out, "proto", "sixnimmt", "v1", name));
}
console.log(`built ${path.relative(process.cwd(), path.join(out, "bot.js"))}`);
