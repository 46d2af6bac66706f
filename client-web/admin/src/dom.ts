// Building DOM nodes from data: every text from the network goes in with
// textContent (never as markup).

/** An element `tag` of `doc` with `text` (if any) and attributes `attrs`. */
export function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  text?: string | null,
  attrs: Readonly<Record<string, string>> = {},
): HTMLElementTagNameMap[K] {
  const node = doc.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

/** The element with id `id`, of type `type`; throws when the page lacks it. */
export function byId<T extends HTMLElement>(doc: Document, id: string, type: new () => T): T {
  const node = doc.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no #${id}`);
  return node;
}
