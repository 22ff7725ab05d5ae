// Cells an agent inserted (the server marks them `metadata.jupyter_approvals.inserted_by`)
// carry a visible label in every open notebook, so a person sees them before "Run All".

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

/** Class of a cell an agent inserted; its `data-jpa-inserted-by` names the agent. */
export const AGENT_CELL_CLASS = 'jpa-mod-agentCell';

/** The cell metadata key the server writes. */
const METADATA_KEY = 'jupyter_approvals';

interface ICellLike {
  node: HTMLElement;
  model: {
    getMetadata(key: string): unknown;
    metadataChanged: { connect(slot: () => void): boolean };
  };
  toggleClass(name: string, force?: boolean): boolean;
}

/** Cells whose metadata changes are already followed. */
const followed = new WeakSet<object>();

/** Who inserted the cell, from its metadata ('' for the person's own cells). */
export function insertedBy(metadata: unknown): string {
  if (metadata && typeof metadata === 'object') {
    const by = (metadata as { inserted_by?: unknown }).inserted_by;
    if (typeof by === 'string') {
      return by;
    }
  }
  return '';
}

function mark(cell: ICellLike): void {
  const by = insertedBy(cell.model.getMetadata(METADATA_KEY));
  cell.toggleClass(AGENT_CELL_CLASS, !!by);
  if (by) {
    cell.node.dataset.jpaInsertedBy = by;
    cell.node.title = `This cell was inserted by ${by}: read it before you run it.`;
  } else if (cell.node.dataset.jpaInsertedBy !== undefined) {
    delete cell.node.dataset.jpaInsertedBy;
    cell.node.removeAttribute('title');
  }
}

function watch(panel: NotebookPanel): void {
  const refresh = (): void => {
    for (const widget of panel.content.widgets) {
      const cell = widget as unknown as ICellLike;
      mark(cell);
      // The server marks cells an agent inserts through a room a moment after they appear.
      if (!followed.has(cell.model)) {
        followed.add(cell.model);
        cell.model.metadataChanged.connect(() => mark(cell));
      }
    }
  };
  // New cells get their widgets after the model changed: look again once they exist.
  const soon = (): void => void window.setTimeout(refresh, 0);
  void panel.context.ready.then(() => {
    refresh();
    panel.content.model?.cells.changed.connect(soon);
  });
  panel.content.modelContentChanged.connect(soon);
}

/** Label agent-inserted cells in every notebook the tracker knows, now and later. */
export function markAgentCells(tracker: INotebookTracker): void {
  tracker.forEach(watch);
  tracker.widgetAdded.connect((_, panel) => watch(panel));
}
