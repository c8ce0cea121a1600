// What the page knows of tools: each tool's hints (approval, MCP annotations).

/** What a tool says of itself: whether it asks first, and its MCP annotations (hints
 * from its server, shown as it declared them). */
export function toolHints(tool) {
  if (!tool) return [];
  const out = [];
  if (tool.approval === 'always') out.push('asks for approval');
  const a = tool.annotations || {};
  if (a.readOnlyHint === true) out.push('read-only');
  else if (a.destructiveHint === true) out.push('destructive');
  if (a.idempotentHint === true) out.push('idempotent');
  if (a.openWorldHint === true) out.push('open world');
  return out;
}
