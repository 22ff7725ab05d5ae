// Types of views/preview.js for the sidebar's TypeScript: the structured preview of
// docs/protocol.md 4.1, as generated from jupyter_approvals/core/schemas/.

import type {
  Block,
  HeadlineCount,
  StructuredPreview,
  Tone
} from '../../labextension/src/schemaTypes';

export type { Tone };
export type IHeadlineCount = HeadlineCount;
export type IStructuredBlock = Block;
export type IStructuredPreview = StructuredPreview;

/** The structured preview as one element, every value set as text. */
export function renderStructured(doc: IStructuredPreview): HTMLElement;

/** A button that shows the rest of `box` in place when it holds more than `limit` pixels
 * (the box itself never scrolls); hidden while everything fits. */
export function foldTall(box: HTMLElement, limit: number): HTMLButtonElement;
