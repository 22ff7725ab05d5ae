// The request whose card or sidebar row holds the focus, and pressing its buttons (for the
// keyboard commands of keyboard.ts). Pressing the button itself keeps its every rule.

/** Where a request's buttons are: a sidebar row, or a card under a cell. */
const HOLDERS = '[data-testid="jpa-sidebar-item"], [data-testid="jpa-card"]';
const BUTTONS: Record<'approve' | 'reject', string> = {
  approve: '.jpa-Sidebar-approve, .jpa-approve',
  reject: '.jpa-Sidebar-reject, .jpa-reject'
};

/** The card or sidebar row that holds the focus, if any. */
export function focusedRequest(active: Element | null = document.activeElement): Element | null {
  return active?.closest(HOLDERS) ?? null;
}

/**
 * Press `decision`'s button of the focused request. Returns what happened: `pressed`, `wait`
 * (the button is disabled: the reading floor, a decision on its way, a busy kernel), `ended`
 * (the button is hidden: the request was decided or ended, nothing waits for an answer) or
 * `none` (no request has the focus).
 */
export function decideFocused(
  decision: 'approve' | 'reject',
  active: Element | null = document.activeElement
): 'pressed' | 'wait' | 'ended' | 'none' {
  const holder = focusedRequest(active);
  const button = holder?.querySelector<HTMLButtonElement>(BUTTONS[decision]);
  if (!holder || !button) {
    return 'none';
  }
  if (hiddenWithin(button, holder)) {
    return 'ended';
  }
  if (button.disabled) {
    return 'wait';
  }
  button.click();
  return 'pressed';
}

/** Whether `node` or a parent up to `holder` is hidden (a card hides its ended actions). */
function hiddenWithin(node: HTMLElement, holder: Element): boolean {
  for (let at: Element | null = node; at && at !== holder.parentElement; at = at.parentElement) {
    if (at instanceof HTMLElement && (at.hidden || at.style.display === 'none')) {
      return true;
    }
  }
  return false;
}
