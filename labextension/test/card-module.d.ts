// The card's front end (see vitest.config.mts): anywidget's `render` contract, as card.js
// implements it.
declare module 'virtual:jupyter-approvals-card' {
  /** The part of anywidget's model the card uses: synced traits, change events, messages. */
  export interface ICardModel {
    get(name: string): unknown;
    on(event: 'change', callback: () => void): void;
    off(event: 'change', callback: () => void): void;
    send(content: Record<string, unknown>): void;
  }

  /** The structured preview renderer, views/preview.js, which the module begins with. */
  export function renderStructured(doc: unknown): HTMLElement;

  const card: {
    /** Draw the card into `el`; the returned function stops its timers and listeners. */
    render(props: { model: ICardModel; el: HTMLElement }): () => void;
  };
  export default card;
}
