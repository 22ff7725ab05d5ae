// The structured preview renderer shared by the card and the sidebar
// (jupyter_approvals/views/preview.js), block by block, against the shape of docs/protocol.md
// 4.1 as jupyter_approvals/core/structured.py checks it. Every value is text: a hostile
// string must come out as the characters it is.

import { describe, expect, it } from 'vitest';

import {
  IStructuredBlock,
  IStructuredPreview,
  foldTall,
  renderStructured
} from '../../jupyter_approvals/views/preview.js';

/** Markup, an event handler and a script: none of it may become an element or run. */
const HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>&amp;';

function doc(fields: Partial<IStructuredPreview> = {}): IStructuredPreview {
  return { version: 1, headline: [], blocks: [], left_out: [], notes: [], ...fields };
}

/** The texts of the elements `selector` finds in `root`, in document order. */
function texts(root: Element, selector: string): (string | null)[] {
  return Array.from(root.querySelectorAll(selector), node => node.textContent);
}

function expectNoMarkup(root: Element): void {
  expect(root.querySelector('img, script, a, iframe')).toBeNull();
  expect((window as unknown as { pwned?: number }).pwned).toBeUndefined();
}

describe('the headline', () => {
  it('shows each count in its tone, grouped by thousands, before any block', () => {
    // Given counts of every tone, one of them large
    const preview = doc({
      headline: [
        { label: 'rows to add', count: 1234567, tone: 'added' },
        { label: 'row to remove', count: 1, tone: 'removed' },
        { label: 'rows to change', count: 0, tone: 'changed' },
        { label: 'columns', count: 3, tone: 'neutral' }
      ],
      blocks: [{ type: 'argv', title: null, items: ['ls'] }]
    });

    // When it is rendered
    const root = renderStructured(preview);

    // Then the headline comes first, one chip per count, the count in bold
    const headline = root.firstElementChild as HTMLElement;
    expect(headline.dataset.testid).toBe('jpa-sp-headline');
    expect(texts(headline, '.jpa-sp-count')).toEqual([
      '1,234,567 rows to add',
      '1 row to remove',
      '0 rows to change',
      '3 columns'
    ]);
    expect(texts(headline, '.jpa-sp-count > b')).toEqual(['1,234,567', '1', '0', '3']);
    const tones = Array.from(headline.children, chip => chip.className);
    expect(tones).toEqual([
      'jpa-sp-count jpa-sp-tone-added',
      'jpa-sp-count jpa-sp-tone-removed',
      'jpa-sp-count jpa-sp-tone-changed',
      'jpa-sp-count jpa-sp-tone-neutral'
    ]);
  });

  it('is left out when there are no counts', () => {
    // When a preview without counts is rendered
    const root = renderStructured(doc({ blocks: [{ type: 'argv', title: null, items: ['ls'] }] }));

    // Then there is no headline, and the block comes first
    expect(root.querySelector('[data-testid="jpa-sp-headline"]')).toBeNull();
    expect(root.firstElementChild?.className).toBe('jpa-sp-block jpa-sp-argv-block');
  });
});

describe('a diff block', () => {
  const diff: IStructuredBlock = {
    type: 'diff',
    title: 'Changes',
    old_path: 'data/orders.csv',
    new_path: 'data/orders.csv',
    hunks: [
      {
        old_start: 3,
        new_start: 3,
        lines: [
          { op: 'context', old: 3, new: 3, parts: [{ text: 'id,units', changed: false }] },
          {
            op: 'removed',
            old: 4,
            new: null,
            parts: [
              { text: '5,', changed: false },
              { text: '3', changed: true }
            ]
          },
          {
            op: 'added',
            old: null,
            new: 4,
            parts: [
              { text: '5,', changed: false },
              { text: '4', changed: true }
            ]
          }
        ]
      },
      {
        old_start: 120,
        new_start: 121,
        lines: [{ op: 'added', old: null, new: 121, parts: [{ text: HOSTILE, changed: false }] }]
      }
    ]
  };

  it('shows both paths, then each hunk with its start lines', () => {
    // When a two-hunk diff is rendered
    const root = renderStructured(doc({ blocks: [diff] }));

    // Then the block has its title and names the files, old then new
    const section = root.querySelector('section.jpa-sp-diff-block') as HTMLElement;
    expect(section.querySelector('h4.jpa-sp-title')?.textContent).toBe('Changes');
    expect(section.querySelector('.jpa-sp-diff-files')?.textContent).toBe(
      'data/orders.csv → data/orders.csv'
    );
    // And each hunk is a table headed by where it starts on each side
    const hunks = section.querySelectorAll('table.jpa-sp-hunk');
    expect(hunks).toHaveLength(2);
    expect(texts(section, '.jpa-sp-hunk-head')).toEqual(['@@ line 3 → 3', '@@ line 120 → 121']);
    expect((hunks[0].querySelector('.jpa-sp-hunk-head td') as HTMLTableCellElement).colSpan).toBe(
      4
    );
  });

  it('numbers each line on the side it exists on, with its sign and changed words', () => {
    // When the diff is rendered
    const root = renderStructured(doc({ blocks: [diff] }));
    const rows = root.querySelectorAll('table.jpa-sp-hunk')[0].querySelectorAll('tr.jpa-sp-line');

    // Then a line shows its old and new number (blank where it does not exist), and its sign
    const cells = Array.from(rows, row => texts(row, 'td'));
    expect(cells).toEqual([
      ['3', '3', ' ', 'id,units'],
      ['4', '', '−', '5,3'],
      ['', '4', '+', '5,4']
    ]);
    expect(Array.from(rows, row => row.className)).toEqual([
      'jpa-sp-line jpa-sp-context',
      'jpa-sp-line jpa-sp-removed',
      'jpa-sp-line jpa-sp-added'
    ]);
    // And only the words that differ from the paired line are marked
    expect(texts(rows[1], '.jpa-sp-changed')).toEqual(['3']);
    expect(texts(rows[2], '.jpa-sp-changed')).toEqual(['4']);
    expect(texts(rows[0], '.jpa-sp-changed')).toEqual([]);
  });

  it('shows a line of markup as its characters', () => {
    // When a diff adds a line of markup
    const root = renderStructured(doc({ blocks: [diff] }));

    // Then the line reads as written and no element of it exists
    const last = root.querySelectorAll('table.jpa-sp-hunk')[1].querySelector('.jpa-sp-text');
    expect(last?.textContent).toBe(HOSTILE);
    expect(last?.childNodes).toHaveLength(1);
    expect(last?.firstChild?.nodeType).toBe(Node.TEXT_NODE);
    expectNoMarkup(root);
  });
});

describe('a table block', () => {
  const table: IStructuredBlock = {
    type: 'table',
    title: null,
    columns: [
      { name: 'id', type: 'int64', key: true },
      { name: 'region', type: null, key: false }
    ],
    rows: [
      { change: 'added', cells: [{ text: '7' }, { text: 'east' }] },
      { change: 'removed', cells: [{ text: '8' }, { text: 'west' }] },
      { change: 'changed', cells: [{ text: '9' }, { old: 'north', new: HOSTILE }] },
      { change: 'same', cells: [{ text: "'10'" }, { text: 'south' }] }
    ]
  };

  it('heads the columns with their names, marks the key and names the types', () => {
    // When a table is rendered
    const root = renderStructured(doc({ blocks: [table] }));

    // Then the first column is the change mark, then one per column; a column without a type
    // shows none
    const head = Array.from(root.querySelectorAll('table.jpa-sp-table tr')[0].children);
    expect(head.map(th => th.textContent)).toEqual(['', 'id int64', 'region']);
    expect(head.map(th => th.className)).toEqual(['jpa-sp-change', 'jpa-sp-key', '']);
  });

  it('marks each row by its change and shows a changed value as old → new', () => {
    // When a table is rendered
    const root = renderStructured(doc({ blocks: [table] }));
    const rows = root.querySelectorAll('tr.jpa-sp-row');

    // Then each row has its change mark and class
    expect(Array.from(rows, row => row.className)).toEqual([
      'jpa-sp-row jpa-sp-added',
      'jpa-sp-row jpa-sp-removed',
      'jpa-sp-row jpa-sp-changed',
      'jpa-sp-row jpa-sp-same'
    ]);
    expect(Array.from(rows, row => row.firstElementChild?.textContent)).toEqual([
      '+',
      '−',
      '~',
      ''
    ]);
    // And the values are as the type writes them (a string key keeps its quotes)
    expect(texts(rows[3], 'td')).toEqual(['', "'10'", 'south']);
    // And a changed value shows the old one struck and the new one, as text
    const changed = rows[2].querySelector('td.jpa-sp-cell-changed') as HTMLElement;
    expect(changed.querySelector('del.jpa-sp-old')?.textContent).toBe('north');
    expect(changed.querySelector('ins.jpa-sp-new')?.textContent).toBe(HOSTILE);
    expect(changed.textContent).toBe(`north → ${HOSTILE}`);
    expectNoMarkup(root);
  });
});

describe('a code block', () => {
  it('highlights Python keywords, strings, numbers and comments as spans of text', () => {
    // When Python code is rendered
    const text = 'def f(x):\n    return x + 42  # the answer\nprint("<b>hi</b>")';
    const root = renderStructured(
      doc({ blocks: [{ type: 'code', title: 'Code that runs', language: 'python', text }] })
    );

    // Then the code reads exactly as written, in a pre, marked with its language
    const code = root.querySelector('pre.jpa-sp-code > code') as HTMLElement;
    expect(code.className).toBe('jpa-sp-code-text language-python');
    expect(code.textContent).toBe(text);
    // And the tokens are spans: keywords, the number, the comment, the string with its markup
    expect(texts(code, '.jpa-sp-tok-keyword')).toEqual(['def', 'return']);
    expect(texts(code, '.jpa-sp-tok-number')).toEqual(['42']);
    expect(texts(code, '.jpa-sp-tok-comment')).toEqual(['# the answer']);
    expect(texts(code, '.jpa-sp-tok-string')).toEqual(['"<b>hi</b>"']);
    expect(code.querySelector('b')).toBeNull();
  });

  it('reads SQL keywords in any case', () => {
    // When SQL is rendered
    const root = renderStructured(
      doc({
        blocks: [
          {
            type: 'code',
            title: null,
            language: 'sql',
            text: "DELETE from t WHERE a = 'x' -- gone"
          }
        ]
      })
    );

    // Then upper- and lower-case keywords are both keywords
    const code = root.querySelector('code') as HTMLElement;
    expect(texts(code, '.jpa-sp-tok-keyword')).toEqual(['DELETE', 'from', 'WHERE']);
    expect(texts(code, '.jpa-sp-tok-string')).toEqual(["'x'"]);
    expect(texts(code, '.jpa-sp-tok-comment')).toEqual(['-- gone']);
  });

  it('highlights JSON literals, and leaves text and unknown languages plain', () => {
    // When JSON, text and a language the renderer does not know are rendered
    const root = renderStructured(
      doc({
        blocks: [
          { type: 'code', title: null, language: 'json', text: '{"a": [1, true, null]}' },
          { type: 'code', title: null, language: 'text', text: 'if x then y' },
          { type: 'code', title: null, language: 'toString', text: 'if x then y' } as never
        ]
      })
    );

    // Then JSON has its strings, numbers and literals marked
    const [json, plain, unknown] = Array.from(root.querySelectorAll('code'));
    expect(texts(json, '.jpa-sp-tok-string')).toEqual(['"a"']);
    expect(texts(json, '.jpa-sp-tok-number')).toEqual(['1']);
    expect(texts(json, '.jpa-sp-tok-keyword')).toEqual(['true', 'null']);
    // And the others are one text each, without a language class (not even an inherited name)
    for (const code of [plain, unknown]) {
      expect(code.className).toBe('jpa-sp-code-text');
      expect(code.children).toHaveLength(0);
      expect(code.textContent).toBe('if x then y');
    }
  });
});

describe('the other blocks', () => {
  it('shows facts, the argument vector, a request, paths and lines as text', () => {
    // When one block of each kind is rendered
    const root = renderStructured(
      doc({
        blocks: [
          {
            type: 'facts',
            title: null,
            items: [
              { label: 'file', value: 'out/a.csv', path: true },
              { label: 'size', value: '12 KiB', path: false }
            ]
          },
          { type: 'argv', title: null, items: ['rm', '-rf', 'build dir', HOSTILE] },
          {
            type: 'request',
            title: null,
            method: 'POST',
            url: 'https://api.example.test/v1?q=<x>'
          },
          {
            type: 'paths',
            title: null,
            items: [
              { path: 'a/b.txt', detail: 'new' },
              { path: 'c.txt', detail: null }
            ]
          },
          { type: 'text', title: null, lines: ['first', '  second', HOSTILE] }
        ]
      })
    );

    // Then facts are a definition list; a path value wraps only after its separators
    expect(texts(root, '.jpa-sp-facts dt')).toEqual(['file', 'size']);
    expect(texts(root, '.jpa-sp-facts dd')).toEqual(['out/a.csv', '12 KiB']);
    expect(root.querySelectorAll('.jpa-sp-facts dd')[0].querySelectorAll('wbr')).toHaveLength(1);
    expect(root.querySelector('.jpa-sp-facts dd:nth-of-type(2) .jpa-sp-path')).toBeNull();
    // And each argument is one item, spaces and all
    expect(texts(root, '.jpa-sp-argv li')).toEqual(['rm', '-rf', 'build dir', HOSTILE]);
    // And a request shows its method and exact URL
    expect(root.querySelector('.jpa-sp-method')?.textContent).toBe('POST');
    expect(root.querySelector('.jpa-sp-url')?.textContent).toBe(
      'https://api.example.test/v1?q=<x>'
    );
    // And paths carry their detail when they have one
    expect(texts(root, '.jpa-sp-paths li')).toEqual(['a/b.txt new', 'c.txt']);
    // And lines are shown as in the text preview
    expect(root.querySelector('pre.jpa-sp-lines')?.textContent).toBe(`first\n  second\n${HOSTILE}`);
    expectNoMarkup(root);
  });

  it('names a block type it does not know instead of guessing', () => {
    // When a newer kernel sends a block type this renderer does not know
    const root = renderStructured(
      doc({ blocks: [{ type: 'chart', title: 'A chart', points: [1, 2] } as never] })
    );

    // Then the block keeps its title and says it cannot be shown here
    const section = root.querySelector('section') as HTMLElement;
    expect(section.className).toBe('jpa-sp-block');
    expect(section.querySelector('h4')?.textContent).toBe('A chart');
    expect(section.querySelector('.jpa-sp-unknown')?.textContent).toBe(
      '(a chart block this view cannot show; see the text preview)'
    );
  });
});

describe('what is left out, and the notes', () => {
  it('says how much of each kind is not shown, then the notes, after the blocks', () => {
    // When a preview that left things out is rendered
    const root = renderStructured(
      doc({
        blocks: [{ type: 'argv', title: null, items: ['ls'] }],
        left_out: [
          { kind: 'diff lines', count: 1200 },
          { kind: 'files', count: 3 }
        ],
        notes: ['Not compared: the file is over 512 MiB.', HOSTILE]
      })
    );

    // Then the cuts are listed with their counts, and the notes follow, as text
    expect(texts(root, 'ul.jpa-sp-left-out li')).toEqual([
      '… 1,200 more diff lines not shown',
      '… 3 more files not shown'
    ]);
    expect(texts(root, 'p.jpa-sp-note')).toEqual([
      'Not compared: the file is over 512 MiB.',
      HOSTILE
    ]);
    const order = Array.from(root.children, child => child.className);
    expect(order).toEqual([
      'jpa-sp-block jpa-sp-argv-block',
      'jpa-sp-left-out',
      'jpa-sp-note',
      'jpa-sp-note'
    ]);
    expectNoMarkup(root);
  });

  it('renders a document with no blocks, cuts or notes as an empty, left-to-right box', () => {
    // When the server's replacement for an oversized document (no blocks, one note) and an
    // empty one are rendered
    const replaced = renderStructured(doc({ notes: ['The structured preview was too large.'] }));
    const empty = renderStructured(doc());

    // Then the first only says so, the second is empty; both are marked for tests and LTR
    expect(replaced.textContent).toBe('The structured preview was too large.');
    expect(empty.childNodes).toHaveLength(0);
    expect(empty.dataset.testid).toBe('jpa-structured');
    expect(empty.dir).toBe('ltr');
  });
});

describe('a preview taller than its place', () => {
  /** A box whose content measures `height` pixels (jsdom lays nothing out). */
  function boxHolding(height: number): HTMLElement {
    const box = document.createElement('div');
    box.append(document.createElement('pre'));
    Object.defineProperty(box, 'scrollHeight', { get: () => height });
    document.body.append(box);
    return box;
  }

  it('is cut at the limit without a scroll bar, and one button shows the rest in place', () => {
    // Given a box holding 900 pixels of preview, folded at 480
    const box = boxHolding(900);
    const more = foldTall(box, 480);
    // Then the box shows 480 pixels and hides the rest without scrolling, and says so
    expect(box.style.maxHeight).toBe('480px');
    expect(box.style.overflow).toBe('hidden');
    expect(more.hidden).toBe(false);
    expect(more.textContent).toBe('Show the whole preview');
    expect(more.getAttribute('aria-expanded')).toBe('false');
    // When the person presses it
    more.click();
    // Then everything shows, and the button folds it again
    expect(box.style.maxHeight).toBe('none');
    expect(box.style.overflow).toBe('visible');
    expect(more.textContent).toBe('Show less of the preview');
    expect(more.getAttribute('aria-expanded')).toBe('true');
    more.click();
    expect(box.style.maxHeight).toBe('480px');
  });

  it('shows no button while everything fits', () => {
    // Given a box holding less than the limit
    const box = boxHolding(200);
    // When it is folded at 480
    const more = foldTall(box, 480);
    // Then there is nothing to show more of
    expect(more.hidden).toBe(true);
    expect(box.classList.contains('jpa-sp-folded-tall')).toBe(false);
  });
});
