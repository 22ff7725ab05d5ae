// Types of views/preview.js for the sidebar's TypeScript: the structured preview of
// docs/protocol.md 4.1, as a kernel or the server sends it.

export type Tone = 'added' | 'removed' | 'changed' | 'neutral';

export interface IHeadlineCount {
  label: string;
  count: number;
  tone: Tone;
}

export interface IStructuredBlock {
  type: string;
  title: string | null;
  [field: string]: unknown;
}

export interface IStructuredPreview {
  version: number;
  headline: IHeadlineCount[];
  blocks: IStructuredBlock[];
  left_out: { kind: string; count: number }[];
  notes: string[];
}

/** The structured preview as one element, every value set as text. */
export function renderStructured(doc: IStructuredPreview): HTMLElement;
