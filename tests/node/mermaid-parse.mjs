// Parse Mermaid text (stdin) with Mermaid's own parser, as GitHub renders it: prints
// {"ok": true, "type": "<diagram>"} or {"ok": false, "error": "..."} (exit 1).
import { JSDOM } from "jsdom";

const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMParser = dom.window.DOMParser;
globalThis.Element = dom.window.Element;
globalThis.HTMLElement = dom.window.HTMLElement;
const { default: mermaid } = await import("mermaid");

let text = "";
for await (const chunk of process.stdin) text += chunk;
try {
  const result = await mermaid.parse(text);
  console.log(JSON.stringify({ ok: true, type: result.diagramType }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error.message || error).slice(0, 300) }));
  process.exitCode = 1;
}
