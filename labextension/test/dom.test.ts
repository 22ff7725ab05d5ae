// The sidebar's one element helper (src/dom.ts): the browser tests select on the class names
// and data-testid attributes it writes, so what it writes is pinned here.

import { describe, expect, it } from 'vitest';

import { el, setBreakableText } from '../src/dom';

describe('el', () => {
  it('makes an element with the class, the text and the test id', () => {
    // Given / When an approve button is made
    const node = el('button', 'jpa-Sidebar-approve', {
      text: 'Approve',
      testid: 'jpa-sidebar-approve'
    });

    // Then it is a button with exactly that class, text and data-testid
    expect(node).toBeInstanceOf(HTMLButtonElement);
    expect(node.outerHTML).toBe(
      '<button class="jpa-Sidebar-approve" data-testid="jpa-sidebar-approve">Approve</button>'
    );
  });

  it('writes an empty class, and no test id or text unless given', () => {
    // Given / When elements are made without options, or with empty ones
    const bare = el('pre', '');
    const empty = el('span', 'jpa-Sidebar-user', { text: '', testid: '' });

    // Then the class attribute is there (empty), and no data-testid nor text is
    expect(bare.outerHTML).toBe('<pre class=""></pre>');
    expect(empty.outerHTML).toBe('<span class="jpa-Sidebar-user"></span>');
  });
});

describe('setBreakableText', () => {
  it('lets a path wrap after its separators, never parsing markup', () => {
    // Given a node
    const node = document.createElement('div');
    // When a path with markup in a name is set
    setBreakableText(node, 'data/<b>x</b>/orders.csv');
    // Then names stay whole, a break follows each separator, and the markup is text
    expect(node.innerHTML).toBe('data/<wbr>&lt;b&gt;x&lt;/<wbr>b&gt;/<wbr>orders.csv');
    expect(node.textContent).toBe('data/<b>x</b>/orders.csv');
    expect(node.querySelector('b')).toBeNull();
  });
});
