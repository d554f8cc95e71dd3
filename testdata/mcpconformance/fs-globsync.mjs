// fs as Node 22 has it: Node 20's fs plus globSync, from the glob package.
export * from "node:fs";
export { default } from "node:fs";
export { globSync } from "glob";
