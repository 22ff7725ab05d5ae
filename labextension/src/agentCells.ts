// Cells an agent inserted (the server marks them `metadata.jupyter_approvals.inserted_by`)
// carry a visible label in every open notebook, so a person sees them before "Run All".

import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

/** Class of a cell an agent inserted; its `data-jpa-inserted-by` names the agent. */
export const AGENT_CELL_CLASS = 'jpa-mod-agentCell';

/** The cell metadata key the server writes. */
const METADATA_KEY = 'jupyter_approvals';

interface ICellLike {
  node: HTMLElement;
  model: { getMetadata(key: string): unknown };
  toggleClass(name: string, force?: boolean): boolean;
}

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
    for (const cell of panel.content.widgets) {
      mark(cell as unknown as ICellLike);
    }
  };
  void panel.context.ready.then(refresh);
  panel.content.modelContentChanged.connect(refresh);
}

/** Label agent-inserted cells in every notebook the tracker knows, now and later. */
export function markAgentCells(tracker: INotebookTracker): void {
  tracker.forEach(watch);
  tracker.widgetAdded.connect((_, panel) => watch(panel));
}
