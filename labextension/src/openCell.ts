// "Open the requesting cell": find the notebook (already open, else open it), then make the
// cell whose model id is the request's `cell_id` the active cell and scroll it into view.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

/**
 * Returns false when the notebook could not be opened here or the cell is no longer in it.
 *
 * An open notebook is taken from the tracker rather than through the document manager:
 * Notebook 7 shows one document per page and its opener does not reveal the current one.
 */
export async function openRequestingCell(
  app: JupyterFrontEnd,
  docManager: IDocumentManager | null,
  tracker: INotebookTracker | null,
  path: string,
  cellId: string | null | undefined
): Promise<boolean> {
  let panel = tracker?.find(widget => widget.context.path === path) ?? null;
  if (panel) {
    app.shell.activateById(panel.id);
  } else {
    const widget = docManager?.openOrReveal(path);
    if (!widget) {
      return false;
    }
    if (!(widget instanceof NotebookPanel)) {
      return true;
    }
    panel = widget;
  }
  if (!cellId) {
    return true;
  }
  await panel.context.ready;
  await panel.revealed;
  const notebook = panel.content;
  const index = notebook.widgets.findIndex(cell => cell.model.id === cellId);
  if (index < 0) {
    return false;
  }
  notebook.deselectAll();
  notebook.activeCellIndex = index;
  await notebook.scrollToCell(notebook.widgets[index], 'center');
  // Command mode: the person looks at the cell; keys typed next must not edit it.
  notebook.mode = 'command';
  return true;
}
