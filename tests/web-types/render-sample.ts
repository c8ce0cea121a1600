// Type-checked with web/toolwire-render.d.ts by `node gen.mjs --check` (tsc --strict): a
// page using the renderer as a package, so the hand-written types cannot drift from how
// the app calls it. Not run.

import {pathText, registerRenderer, renderResult, tree, type RenderOptions} from "../../web/toolwire-render.js";
import type {ToolResult} from "../../web/toolwire.d.ts";

const result: ToolResult = {
  callId: "call_1",
  toolName: "read_file",
  status: "success",
  output: [{kind: "text", data: {content: "hello"}}],
};

const kept = new Map<string, {contents: object[]}>();
const opts: RenderOptions = {
  resourceUrl: (blob) => (blob.startsWith("blake3:") ? `/api/resources/${blob}/content` : null),
  sandboxOrigin: "http://127.0.0.1:4001",
  readResource: async (uri) => ({contents: [{uri, text: "read"}]}),
  wasRead: (uri) => kept.get(uri),
};

export function draw(el: HTMLElement): void {
  renderResult(el, result, opts);
  registerRenderer("acme.chart", (box, value) => {
    box.append(tree(value.data));
  });
  const path: string = pathText(["a", 2, "odd key"]);
  el.title = path;
  // @ts-expect-error: a result is required.
  renderResult(el);
}
