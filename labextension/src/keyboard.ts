// Approve or reject from the keyboard: two JupyterLab commands (in the command palette, with
// shortcuts) acting on the request whose card or sidebar row holds the focus. They press that
// request's own button, so every rule of the button holds: nothing happens inside the reading
// floor, while the decision is being sent, or once it is decided.

import { JupyterFrontEnd } from '@jupyterlab/application';
import { ICommandPalette, Notification } from '@jupyterlab/apputils';

import { decideFocused, focusedRequest } from './focusedRequest';

/** The commands and their default shortcuts. */
export namespace KeyboardCommands {
  export const approve = 'jupyter-approvals:approve-focused';
  export const reject = 'jupyter-approvals:reject-focused';
  export const approveKeys = ['Accel Alt A'];
  export const rejectKeys = ['Accel Alt R'];
}

/** Register both commands, their shortcuts (only where a request can hold the focus) and
 * their palette items. */
export function addKeyboardCommands(app: JupyterFrontEnd, palette: ICommandPalette | null): void {
  for (const decision of ['approve', 'reject'] as const) {
    const id = decision === 'approve' ? KeyboardCommands.approve : KeyboardCommands.reject;
    const word = decision === 'approve' ? 'Approve' : 'Reject';
    app.commands.addCommand(id, {
      label: `${word} the Focused Approval Request`,
      caption: `${word} the request whose card or sidebar row has the focus (after its reading time)`,
      isEnabled: () => focusedRequest() !== null,
      execute: () => {
        const result = decideFocused(decision);
        if (result === 'wait') {
          Notification.info(
            `${word}: not yet. Read the request first, or wait for its kernel; the button says why.`,
            { autoClose: 4000 }
          );
        } else if (result === 'ended') {
          Notification.info(`${word}: this request no longer waits for a decision.`, {
            autoClose: 4000
          });
        }
      }
    });
    const keys =
      decision === 'approve' ? KeyboardCommands.approveKeys : KeyboardCommands.rejectKeys;
    for (const selector of ['.jpa-Sidebar', '.jpa-card']) {
      app.commands.addKeyBinding({ command: id, keys, selector });
    }
    palette?.addItem({ command: id, category: 'Approvals' });
  }
}
