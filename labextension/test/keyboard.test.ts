// Approving from the keyboard (src/keyboard.ts, src/focusedRequest.ts) presses the focused request's own button, so
// the button's rules (the reading floor above all) hold for the keys too.

import { describe, expect, it } from 'vitest';

import { decideFocused, focusedRequest } from '../src/focusedRequest';

function row(disabled: boolean): { row: HTMLElement; pressed: string[] } {
  const pressed: string[] = [];
  const item = document.createElement('li');
  item.dataset.testid = 'jpa-sidebar-item';
  item.tabIndex = 0;
  for (const name of ['approve', 'reject']) {
    const button = document.createElement('button');
    button.className = `jpa-Sidebar-${name}`;
    button.disabled = disabled;
    button.addEventListener('click', () => pressed.push(name));
    item.append(button);
  }
  document.body.append(item);
  return { row: item, pressed };
}

describe('the keyboard commands', () => {
  it('press the button of the request that has the focus', () => {
    // Given a sidebar row past its reading floor, focused
    const { row: item, pressed } = row(false);
    item.focus();
    // When the approve command runs, Then that row's Approve is pressed, once
    expect(focusedRequest()).toBe(item);
    expect(decideFocused('approve')).toBe('pressed');
    expect(decideFocused('reject', item.querySelector('button'))).toBe('pressed');
    expect(pressed).toEqual(['approve', 'reject']);
    item.remove();
  });

  it('do nothing inside the reading floor, and nothing without a focused request', () => {
    // Given a row whose buttons wait for the reading floor
    const { row: item, pressed } = row(true);
    item.focus();
    // When the commands run, Then nothing is pressed and the caller is told to wait
    expect(decideFocused('approve')).toBe('wait');
    expect(decideFocused('reject')).toBe('wait');
    expect(pressed).toEqual([]);
    // And with the focus elsewhere they find no request
    item.blur();
    expect(decideFocused('approve', document.body)).toBe('none');
    item.remove();
  });

  it('press nothing on a card whose request ended, and say so', () => {
    // Given a focused card whose actions it hid once its request was decided
    const { row: card, pressed } = row(false);
    card.dataset.testid = 'jpa-card';
    const actions = document.createElement('div');
    actions.append(...Array.from(card.querySelectorAll('button')));
    actions.style.display = 'none';
    card.append(actions);
    card.focus();
    // When the commands run, Then nothing is pressed, and the caller learns it ended
    expect(decideFocused('approve')).toBe('ended');
    expect(decideFocused('reject')).toBe('ended');
    expect(pressed).toEqual([]);
    card.remove();
  });
});
