// Opening a request's preview in a main-area tab: the DOM event an approval card sends (a
// widget cannot reach JupyterLab's shell; docs/protocol.md 4.1), which request it names, and
// the one tab each request gets.

import { IApprovalsModel, IPendingRequest } from './tokens';

/** The DOM event an approval card sends to open its preview here (docs/protocol.md 4.1). */
export const OPEN_PREVIEW_EVENT = 'jupyter-approvals:open-preview';

/**
 * The listed request a card's event names (its `request_id` and `fingerprint`), or undefined:
 * the tab shows only what the server listed, never what the event carries.
 */
export function listedRequest(
  model: IApprovalsModel,
  detail: unknown
): IPendingRequest | undefined {
  if (!detail || typeof detail !== 'object') {
    return undefined;
  }
  const { request_id: id, fingerprint } = detail as Record<string, unknown>;
  for (const key of model.keys) {
    const item = model.get(key);
    if (item && item.id === id && item.fingerprint === fingerprint) {
      return item;
    }
  }
  return undefined;
}

/** The id of a request's tab: one tab per kernel and request. */
export function previewPanelId(item: IPendingRequest): string {
  return `jpa-preview-${item.kernel_id || 'server'}-${item.id}`;
}
