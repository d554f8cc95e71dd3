// The conformance suite imports globSync from "fs", which Node 20 lacks
// (it came in Node 22). Loaded with node --import ./node20.mjs, this
// resolve hook gives the suite fs-globsync.mjs for "fs" instead. On Node
// 22 and later it does nothing.
import { register } from "node:module";
import fs from "node:fs";

if (typeof fs.globSync !== "function") {
  register("./node20-hook.mjs", import.meta.url);
}
