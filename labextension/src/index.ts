// The jupyter-approvals sidebar plugin: a left panel listing the requests waiting for a
// person's decision in every running kernel, through the server extension's REST API.

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { INotebookTracker } from '@jupyterlab/notebook';
import { IRenderMimeRegistry } from '@jupyterlab/rendermime';

import { markAgentCells } from './agentCells';
import { addKeyboardCommands } from './keyboard';
import { CARD_OUTPUT_RANK, cardOutputFactory } from './cardOutput';
import { CardOutcomes } from './cardOutcomes';
import { changesCardFactory } from './changesCard';
import { heldCardFactory } from './heldCard';
import { ChangeSetsModel } from './changesModel';
import { shieldIcon } from './icon';
import { ApprovalsModel } from './model';
import { openRequestingCell } from './openCell';
import { ApprovalsPanel } from './panel';
import { NewRequestNotifier } from './notify';
import { OPEN_PREVIEW_EVENT, listedRequest, previewPanelId } from './openPreview';
import { pendingNoteFactory } from './pendingNote';
import { PreviewPanel } from './previewPanel';
import { IItemHandlers, isOpenable } from './pendingItem';
import { IApprovalsModel } from './tokens';

export * from './tokens';

namespace CommandIDs {
  export const show = 'jupyter-approvals:show';
}

const plugin: JupyterFrontEndPlugin<IApprovalsModel> = {
  id: 'jupyter-approvals:sidebar',
  description: 'Pending approval requests of the running kernels, to approve or reject.',
  autoStart: true,
  provides: IApprovalsModel,
  optional: [
    IDocumentManager,
    INotebookTracker,
    ILayoutRestorer,
    ICommandPalette,
    IRenderMimeRegistry
  ],
  activate: (
    app: JupyterFrontEnd,
    docManager: IDocumentManager | null,
    tracker: INotebookTracker | null,
    restorer: ILayoutRestorer | null,
    palette: ICommandPalette | null,
    rendermime: IRenderMimeRegistry | null
  ): IApprovalsModel => {
    const serverSettings = app.serviceManager.serverSettings;
    const model = new ApprovalsModel({ serverSettings });
    const changeSets = new ChangeSetsModel({ serverSettings });
    // The card under a cell that changed files in its sandboxed kernel: notebooks take their
    // renderers from this registry when they open, after the plugins activated.
    rendermime?.addFactory(changesCardFactory(changeSets));
    rendermime?.addFactory(pendingNoteFactory);
    if (tracker) {
      markAgentCells(tracker);
    }
    const handlers: IItemHandlers = {
      decide: (item, decision, reason) => void model.decide(item, decision, reason),
      open: item => {
        const path = item.notebook_path;
        if (!path) {
          return;
        }
        openRequestingCell(app, docManager, tracker, path, item.cell_id)
          .then(found => {
            if (!found) {
              Notification.warning(`The requesting cell is no longer in ${path}.`, {
                autoClose: 5000
              });
            }
          })
          .catch(reason => console.error('jupyter-approvals: cannot open', path, reason));
      },
      openPreview: item => {
        const id = previewPanelId(item);
        const open = Array.from(app.shell.widgets('main')).find(widget => widget.id === id);
        if (!open) {
          app.shell.add(new PreviewPanel(item), 'main');
        }
        app.shell.activateById(id);
      }
    };
    // The held-code card at an agent's cell is the same row, decided in a card.
    const inTheCard: IItemHandlers = {
      ...handlers,
      decide: (item, decision, reason) => void model.decide(item, decision, reason, 'card')
    };
    // A notebook's cards: the kernel's (its own registry holds its widget renderer) and the
    // server's for held agent code, both asking the journal how an ended request ended.
    const outcomes = new CardOutcomes(serverSettings);
    tracker?.widgetAdded.connect((_, notebook) => {
      const lookup = (id: string) => outcomes.lookup(notebook.context.path, id);
      const registry = notebook.content.rendermime;
      registry.addFactory(cardOutputFactory(registry, lookup), CARD_OUTPUT_RANK);
      registry.addFactory(heldCardFactory(model, inTheCard, lookup));
    });
    // A card's "open full size" (the card cannot reach the shell): the event only names
    // the request; the tab shows the sidebar's own row of it, as the server listed it, so a
    // script on the page sending the event can show nothing of its own. Display only.
    window.addEventListener(OPEN_PREVIEW_EVENT, event => {
      const detail = (event as CustomEvent).detail;
      const open = (): boolean => {
        const item = listedRequest(model, detail);
        if (item) {
          handlers.openPreview?.(item);
        }
        return !!item;
      };
      if (!open()) {
        // A request newer than the last poll: ask once more, then open it if it is listed.
        void model.refresh().then(open);
      }
    });
    (window as unknown as Record<string, boolean>)[OPEN_PREVIEW_EVENT] = true;
    // The history tab offers the journals of the notebooks at hand: the current one first,
    // then the other open ones, then those that asked for approval in this session.
    const asked = new Set<string>();
    model.changed.connect((_, change) => {
      for (const key of change.added) {
        const path = model.get(key)?.notebook_path;
        if (isOpenable(path)) {
          asked.add(path);
        }
      }
    });
    const journalPaths = (): string[] => {
      const open: string[] = [];
      tracker?.forEach(notebook => open.push(notebook.context.path));
      const current = tracker?.currentWidget?.context.path;
      return [...(current ? [current] : []), ...open, ...asked];
    };
    const panel = new ApprovalsPanel({
      model,
      handlers,
      serverSettings,
      journalPaths,
      changeSets
    });
    const reveal = () => app.shell.activateById(panel.id);

    app.shell.add(panel, 'left', { rank: 950, type: 'Approvals' });
    restorer?.add(panel, 'jupyter-approvals');
    app.commands.addCommand(CommandIDs.show, {
      label: 'Show Approval Requests',
      caption: 'Open the sidebar of requests waiting for approval',
      icon: shieldIcon,
      execute: reveal
    });
    palette?.addItem({ command: CommandIDs.show, category: 'Approvals' });
    addKeyboardCommands(app, palette);

    const notifier = new NewRequestNotifier(model, panel, reveal);
    panel.shown.connect(() => notifier.dismiss());
    model.start();
    changeSets.start();
    return model;
  }
};

export default plugin;
