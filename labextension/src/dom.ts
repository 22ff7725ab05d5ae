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
