// The one way the sidebar makes an element: a tag, its class, and optionally its text and
// `data-testid` (the browser tests select on both class and test id).

/** What `el` may set besides the class. */
export interface IElementOptions {
  /** The element's text (its textContent). */
  text?: string;
  /** Its `data-testid`; left out when empty. */
  testid?: string;
}

/** A new `tag` element with `className` (set even when empty) and the given text and test id. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  options: IElementOptions = {}
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  if (options.text !== undefined) {
    node.textContent = options.text;
  }
  if (options.testid) {
    node.dataset.testid = options.testid;
  }
  return node;
}

/**
 * Set `text` as the content of `node`, with a break opportunity after every `/` and `\`, so a
 * path wraps at its separators rather than inside a name ("orders.csv" stays whole). Only
 * text nodes and `<wbr>` are made; nothing is parsed as markup. Unchanged text is left as is.
 */
export function setBreakableText(node: HTMLElement, text: string): void {
  if (node.dataset.text === text) {
    return;
  }
  node.dataset.text = text;
  node.replaceChildren();
  for (const piece of text.split(/([/\\])/)) {
    if (!piece) {
      continue;
    }
    node.append(piece);
    if (piece === '/' || piece === '\\') {
      node.append(document.createElement('wbr'));
    }
  }
}
