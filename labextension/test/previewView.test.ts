// The structured preview in a sidebar row: drawn by the card's renderer, every value shown as
// text, drawn once per request (a poll redraws nothing), the text form one click away.

import { describe, expect, it } from 'vitest';

import { IStructuredPreview, renderStructured } from '../../jupyter_approvals/views/preview.js';
import { PendingItem } from '../src/pendingItem';
import { listedRequest } from '../src/openPreview';
import { PreviewBody } from '../src/previewView';
import { IApprovalsModel, IPendingRequest } from '../src/tokens';

const HOSTILE = '<img src=x onerror="window.hacked=1"><script>window.hacked=2</script>';

function tableDoc(value: string): IStructuredPreview {
  return {
    version: 1,
    headline: [
      { label: 'rows to add', count: 2, tone: 'added' },
      { label: 'rows to change', count: 1234, tone: 'changed' }
    ],
    blocks: [
      {
        type: 'table',
        title: 'Changed rows',
        columns: [
          { name: 'id', type: 'int64', key: true },
          { name: 'units', type: 'int64', key: false }
        ],
        rows: [{ change: 'changed', cells: [{ text: '5' }, { old: '3', new: value }] }]
      },
      {
        type: 'facts',
        title: null,
        items: [{ label: 'file', value: 'data/orders.csv', path: true }]
      },
      { type: 'code', title: null, language: 'sql', text: "select * from t where a = 'x' -- note" }
    ],
    left_out: [{ kind: 'rows', count: 7 }],
    notes: ['Compared by key.']
  };
}

function request(structured: IStructuredPreview | null): IPendingRequest {
  return {
    kernel_id: 'k1',
    id: '0123456789abcdef',
    action: 'table.write',
    summary: 'Write data/orders.csv',
    preview: 'text form of the preview',
    preview_omitted: 0,
    structured,
    fingerprint: 'sha256:' + 'a'.repeat(64),
    function: '__main__.save',
    status: 'pending',
    created_at: '2026-12-01T10:00:00.000Z',
    expires_at: '2026-12-01T10:10:00.000Z'
  };
}

describe('renderStructured', () => {
  it('shows the headline counts first, then the blocks, cuts and notes', () => {
    // When a table change is rendered
    const node = renderStructured(tableDoc('4'));

    // Then the counts come before everything else
    expect(node.firstElementChild?.getAttribute('data-testid')).toBe('jpa-sp-headline');
    expect(node.firstElementChild?.textContent).toBe('2 rows to add1,234 rows to change');
    // And a changed cell shows its old and new value, the key its type
    expect(node.querySelector('del')?.textContent).toBe('3');
    expect(node.querySelector('ins')?.textContent).toBe('4');
    expect(node.querySelector('th.jpa-sp-key')?.textContent).toBe('id int64');
    // And what was left out and the notes are said
    expect(node.textContent).toContain('… 7 more rows not shown');
    expect(node.textContent).toContain('Compared by key.');
  });

  it('shows what changes first and folds the plumbing after it, closed', () => {
    // Given a git commit's blocks: its argv and settings marked fold, between its facts and
    // its files
    const doc: IStructuredPreview = {
      version: 1,
      headline: [{ label: 'files to commit', count: 1, tone: 'changed' }],
      blocks: [
        { type: 'argv', title: 'runs (argv)', items: ['/usr/bin/git', 'commit'], fold: true },
        { type: 'facts', title: null, items: [{ label: 'branch', value: 'main', path: false }] },
        { type: 'facts', title: 'git settings', items: [], fold: true },
        { type: 'paths', title: 'files (1)', items: [{ path: '.env', detail: 'added' }] }
      ],
      left_out: [],
      notes: []
    };

    // When it is rendered
    const node = renderStructured(doc);

    // Then the facts and the files come first, in their order, and the folded blocks after
    // them inside one closed disclosure that names them
    const sections = [...node.children].map(child => child.className);
    expect(sections).toEqual([
      'jpa-sp-headline',
      'jpa-sp-block jpa-sp-facts-block',
      'jpa-sp-block jpa-sp-paths-block',
      'jpa-sp-folded'
    ]);
    const folded = node.querySelector('details')!;
    expect(folded.open).toBe(false);
    expect(folded.querySelector('summary')?.textContent).toBe(
      'How it runs: runs (argv), git settings'
    );
    expect(folded.querySelectorAll('section')).toHaveLength(2);
  });

  it('shows markup and script in a value as text, never as elements', () => {
    // When a value carries markup
    const node = renderStructured(tableDoc(HOSTILE));

    // Then its characters are shown and no element of it exists
    expect(node.querySelector('ins')?.textContent).toBe(HOSTILE);
    expect(node.querySelector('img, script')).toBeNull();
    expect((window as unknown as { hacked?: number }).hacked).toBeUndefined();
  });

  it('makes class names only from known values', () => {
    // Given a document whose tone, line op, row change, language and block type are others
    const doc = tableDoc('4');
    doc.headline[0].tone = 'lm-mod-hidden' as never;
    // (none of them is of the schema's shape, hence the casts)
    doc.blocks.push(
      { type: 'code', title: null, language: 'x jp-mod-hidden', text: 'print(1)' } as never,
      { type: 'x lm-mod-hidden', title: null } as never,
      {
        type: 'diff',
        title: null,
        old_path: 'a',
        new_path: 'b',
        hunks: [
          {
            old_start: 1,
            new_start: 1,
            lines: [{ op: 'lm-mod-hidden', old: 1, new: 1, parts: [] }]
          }
        ]
      } as never
    );
    (doc.blocks[0] as { rows: { change: string }[] }).rows[0].change = 'lm-mod-hidden';
    // When rendered
    const node = renderStructured(doc);
    // Then no value became a class: unknown ones fall back to neutral ones
    expect(node.querySelector('.lm-mod-hidden, .jp-mod-hidden')).toBeNull();
    expect(node.querySelector('.jpa-sp-tone-neutral')).not.toBeNull();
    expect(node.querySelector('.jpa-sp-unknown')?.textContent).toContain('x lm-mod-hidden');
  });

  it('lets a path wrap after its separators only', () => {
    // When a path is shown
    const path = renderStructured(tableDoc('4')).querySelector('.jpa-sp-path');

    // Then a break opportunity follows each separator, and the names stay whole
    expect(path?.innerHTML).toBe('data/<wbr>orders.csv');
  });

  it('highlights code with spans of text', () => {
    // When SQL is shown
    const code = renderStructured(tableDoc('4')).querySelector('.jpa-sp-code-text');

    // Then keywords, strings and comments are marked, and the text is unchanged
    expect(code?.textContent).toBe("select * from t where a = 'x' -- note");
    expect(code?.querySelector('.jpa-sp-tok-keyword')?.textContent).toBe('select');
    expect(code?.querySelector('.jpa-sp-tok-string')?.textContent).toBe("'x'");
    expect(code?.querySelector('.jpa-sp-tok-comment')?.textContent).toBe('-- note');
  });
});

describe('PreviewBody', () => {
  it('shows the structured form, with the text form on request', () => {
    // Given a request with a structured preview
    const body = new PreviewBody(request(tableDoc('4')));
    const text = body.node.querySelector('[data-testid="jpa-preview-text"]') as HTMLElement;
    const structured = body.node.querySelector('[data-testid="jpa-structured"]') as HTMLElement;

    // Then the structured form shows and the text waits
    expect(structured.hidden).toBe(false);
    expect(text.hidden).toBe(true);
    // When the person asks for the text, Then it shows instead
    body.toggle.click();
    expect(structured.hidden).toBe(true);
    expect(text.hidden).toBe(false);
    expect(text.textContent).toBe('text form of the preview');
    expect(body.toggle.textContent).toBe('show structured');
    // And a second click goes back
    body.toggle.click();
    expect(structured.hidden).toBe(false);
  });

  it('shows the text form when there is no structured one', () => {
    const body = new PreviewBody(request(null));
    expect(body.hasStructured).toBe(false);
    expect(body.node.textContent).toBe('text form of the preview');
  });
});

describe('PendingItem with a structured preview', () => {
  it('draws it once: a poll with the same request redraws nothing', () => {
    // Given a row
    const handlers = { decide: () => undefined, open: () => undefined };
    const item = new PendingItem(request(tableDoc('4')), handlers);
    const drawn = item.node.querySelector('[data-testid="jpa-structured"]');

    // When the same request is polled again (a new object with the same content)
    item.update(request(tableDoc('4')));

    // Then the very same nodes remain, and the preview starts expanded
    expect(item.node.querySelector('[data-testid="jpa-structured"]')).toBe(drawn);
    expect((item.node.querySelector('details') as HTMLDetailsElement).open).toBe(true);
  });
});

describe('listedRequest', () => {
  const listed = request(tableDoc('4'));
  const model = {
    keys: ['k1/' + listed.id],
    get: (key: string) => (key === 'k1/' + listed.id ? listed : undefined)
  } as unknown as IApprovalsModel;

  it('finds the row the server listed for the request a card names', () => {
    // When a card's event names a listed request and its fingerprint
    const found = listedRequest(model, { request_id: listed.id, fingerprint: listed.fingerprint });
    // Then the tab will show the listed row, not what the event carries
    expect(found).toBe(listed);
  });

  it('ignores an event naming no listed request, or another fingerprint', () => {
    // When a script on the page sends the event with content of its own
    const forged = { request_id: listed.id, fingerprint: 'sha256:' + 'b'.repeat(64) };
    // Then nothing is found, so no tab opens
    expect(listedRequest(model, forged)).toBeUndefined();
    expect(listedRequest(model, { request_id: 'ffffffffffffffff' })).toBeUndefined();
    expect(listedRequest(model, 'not an object')).toBeUndefined();
  });
});
