// The one renderer of structured previews (docs/protocol.md 4.1), used by the approval card
// (concatenated into the card's anywidget module by kernel/card/widget.py) and by the JupyterLab
// sidebar (imported by labextension/src/previewView.ts). It builds DOM nodes and sets every
// value with textContent, so markup, script or bidirectional text in a preview is shown as
// the characters it is, never interpreted. Colours come from JupyterLab theme variables
// (preview.css beside this file).

const PATH_BREAK = /([/\\])/;

// Class names are made only from these known values: a kernel's document could carry others
// (the server checks the shape of what the sidebar gets, nobody checks a card's), and a value
// must never choose a class of the page's own.
const TONES = new Set(['added', 'removed', 'changed', 'neutral']);
const LINE_OPS = new Set(['context', 'added', 'removed']);
const ROW_CHANGES = new Set(['added', 'removed', 'changed', 'same']);
const known = (set, value, fallback) => (set.has(value) ? value : fallback);

function node(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined && text !== null) made.textContent = String(text);
  return made;
}

// A path may wrap after each separator and nowhere else (never "orders\n.csv").
function pathNode(path, className) {
  const out = node('span', `jpa-sp-path ${className || ''}`.trim());
  for (const piece of String(path).split(PATH_BREAK)) {
    if (!piece) continue;
    out.appendChild(document.createTextNode(piece));
    if (PATH_BREAK.test(piece)) out.appendChild(document.createElement('wbr'));
  }
  return out;
}

const KEYWORDS = {
  python:
    'False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield',
  sql: 'select from where insert into values update set delete create table drop alter add column index view and or not null is in as on join left right inner outer full cross group by order having limit offset union all distinct case when then else end begin commit rollback replace primary key default exists like between returning truncate with',
  shell:
    'if then else elif fi for in do done while until case esac function return export local sudo rm mv cp git'
};
const KEYWORD_SETS = Object.fromEntries(
  Object.entries(KEYWORDS).map(([language, words]) => [language, new Set(words.split(' '))])
);
// One pass over the code: comments, strings, numbers, words; the rest stays plain text.
const TOKENS = {
  python:
    /(#[^\n]*)|("""[\s\S]*?"""|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d[\d_]*(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g,
  sql: /(--[^\n]*|\/\*[\s\S]*?\*\/)|('(?:''|[^'])*'|"(?:""|[^"])*")|(\b\d+(?:\.\d+)?\b)|([A-Za-z_][A-Za-z0-9_]*)/g,
  shell: /(#[^\n]*)|("(?:\\.|[^"\\])*"|'[^']*')|(\b\d+\b)|([A-Za-z_][A-Za-z0-9_-]*)/g,
  json: /()("(?:\\.|[^"\\])*")|(-?\b\d+(?:\.\d+)?(?:[eE][+-]?\d+)?\b)|(true|false|null)/g
};

function highlighted(text, language) {
  const pattern = Object.hasOwn(TOKENS, language) ? TOKENS[language] : null;
  const out = node('code', `jpa-sp-code-text${pattern ? ` language-${language}` : ''}`);
  if (!pattern) {
    out.textContent = text;
    return out;
  }
  const keywords = Object.hasOwn(KEYWORD_SETS, language)
    ? KEYWORD_SETS[language]
    : new Set(['true', 'false', 'null']);
  const caseless = language === 'sql';
  let at = 0;
  pattern.lastIndex = 0;
  for (let found = pattern.exec(text); found; found = pattern.exec(text)) {
    if (found[0] === '') {
      pattern.lastIndex += 1;
      continue;
    }
    if (found.index > at) out.appendChild(document.createTextNode(text.slice(at, found.index)));
    let kind = '';
    if (found[1]) kind = 'comment';
    else if (found[2]) kind = 'string';
    else if (found[3]) kind = 'number';
    else if (found[4] && keywords.has(caseless ? found[4].toLowerCase() : found[4]))
      kind = 'keyword';
    out.appendChild(
      kind ? node('span', `jpa-sp-tok-${kind}`, found[0]) : document.createTextNode(found[0])
    );
    at = found.index + found[0].length;
  }
  if (at < text.length) out.appendChild(document.createTextNode(text.slice(at)));
  return out;
}

function headline(items) {
  const out = node('div', 'jpa-sp-headline');
  out.setAttribute('data-testid', 'jpa-sp-headline');
  for (const item of items) {
    const chip = node('span', `jpa-sp-count jpa-sp-tone-${known(TONES, item.tone, 'neutral')}`);
    chip.append(node('b', '', Number(item.count).toLocaleString('en-US')), ` ${item.label}`);
    out.appendChild(chip);
  }
  return out;
}

function facts(block) {
  const out = node('dl', 'jpa-sp-facts');
  for (const item of block.items) {
    out.appendChild(node('dt', '', item.label));
    const value = node('dd');
    value.appendChild(item.path ? pathNode(item.value) : node('span', '', item.value));
    out.appendChild(value);
  }
  return out;
}

function argv(block) {
  const out = node('ol', 'jpa-sp-argv');
  for (const item of block.items) out.appendChild(node('li', '', item));
  return out;
}

function request(block) {
  const out = node('div', 'jpa-sp-request');
  out.append(
    node('span', 'jpa-sp-method', block.method),
    ' ',
    node('span', 'jpa-sp-url', block.url)
  );
  return out;
}

function code(block) {
  const out = node('pre', 'jpa-sp-code');
  out.appendChild(highlighted(block.text, block.language));
  return out;
}

function diff(block) {
  const out = node('div', 'jpa-sp-diff');
  const files = node('div', 'jpa-sp-diff-files');
  files.append(
    pathNode(block.old_path, 'jpa-sp-from'),
    ' → ',
    pathNode(block.new_path, 'jpa-sp-to')
  );
  out.appendChild(files);
  for (const hunk of block.hunks) {
    const table = node('table', 'jpa-sp-hunk');
    const head = node('tr', 'jpa-sp-hunk-head');
    const label = node('td', '', `@@ line ${hunk.old_start} → ${hunk.new_start}`);
    label.colSpan = 4;
    head.appendChild(label);
    table.appendChild(head);
    for (const line of hunk.lines) {
      const op = known(LINE_OPS, line.op, 'context');
      const row = node('tr', `jpa-sp-line jpa-sp-${op}`);
      const sign = { added: '+', removed: '−', context: ' ' }[op];
      row.append(
        node('td', 'jpa-sp-lineno', line.old ?? ''),
        node('td', 'jpa-sp-lineno', line.new ?? ''),
        node('td', 'jpa-sp-sign', sign)
      );
      const text = node('td', 'jpa-sp-text');
      for (const part of line.parts) {
        text.appendChild(
          part.changed
            ? node('span', 'jpa-sp-changed', part.text)
            : document.createTextNode(part.text)
        );
      }
      row.appendChild(text);
      table.appendChild(row);
    }
    out.appendChild(table);
  }
  return out;
}

function table(block) {
  const out = node('table', 'jpa-sp-table');
  const head = node('tr');
  head.appendChild(node('th', 'jpa-sp-change', ''));
  for (const column of block.columns) {
    const th = node('th', column.key ? 'jpa-sp-key' : '', column.name);
    if (column.type) th.appendChild(node('span', 'jpa-sp-type', ` ${column.type}`));
    head.appendChild(th);
  }
  out.appendChild(head);
  for (const row of block.rows) {
    const change = known(ROW_CHANGES, row.change, 'same');
    const tr = node('tr', `jpa-sp-row jpa-sp-${change}`);
    tr.appendChild(
      node('td', 'jpa-sp-change', { added: '+', removed: '−', changed: '~', same: '' }[change])
    );
    for (const cell of row.cells) {
      const td = node('td');
      if ('old' in cell) {
        td.className = 'jpa-sp-cell-changed';
        td.append(node('del', 'jpa-sp-old', cell.old), ' → ', node('ins', 'jpa-sp-new', cell.new));
      } else {
        td.textContent = cell.text;
      }
      tr.appendChild(td);
    }
    out.appendChild(tr);
  }
  // Words stay whole: a table wider than a narrow sidebar scrolls sideways, its rows all shown.
  const wrap = node('div', 'jpa-sp-table-wrap');
  wrap.appendChild(out);
  return wrap;
}

function paths(block) {
  const out = node('ul', 'jpa-sp-paths');
  for (const item of block.items) {
    const li = node('li');
    li.appendChild(pathNode(item.path));
    if (item.detail) li.appendChild(node('span', 'jpa-sp-detail', ` ${item.detail}`));
    out.appendChild(li);
  }
  return out;
}

function lines(block) {
  return node('pre', 'jpa-sp-lines', block.lines.join('\n'));
}

const BLOCKS = { facts, argv, request, code, diff, table, paths, text: lines };

/** One block as a section with its title; an unknown type is named, not guessed at. */
function section(block) {
  const build = Object.hasOwn(BLOCKS, block.type) ? BLOCKS[block.type] : null;
  const out = node('section', `jpa-sp-block${build ? ` jpa-sp-${block.type}-block` : ''}`);
  if (block.title) out.appendChild(node('h4', 'jpa-sp-title', block.title));
  out.appendChild(
    build
      ? build(block)
      : node(
          'div',
          'jpa-sp-unknown',
          `(a ${block.type} block this view cannot show; see the text preview)`
        )
  );
  return out;
}

/**
 * The structured preview `doc` as one element. Unknown block types (a newer kernel) are
 * named, not guessed at; the text preview stays available to the caller for those.
 */
export function renderStructured(doc) {
  const out = node('div', 'jpa-sp');
  out.setAttribute('data-testid', 'jpa-structured');
  out.dir = 'ltr';
  if (doc.headline && doc.headline.length) out.appendChild(headline(doc.headline));
  // What changes first; plumbing (blocks marked fold: the argv of a git command, its
  // settings) after it, closed, one click away.
  const blocks = doc.blocks || [];
  for (const block of blocks.filter(b => b.fold !== true)) out.appendChild(section(block));
  const folded = blocks.filter(b => b.fold === true);
  if (folded.length) {
    const details = node('details', 'jpa-sp-folded');
    details.setAttribute('data-testid', 'jpa-sp-folded');
    const titles = folded.map(b => b.title || b.type).join(', ');
    details.appendChild(node('summary', 'jpa-sp-folded-summary', `How it runs: ${titles}`));
    for (const block of folded) details.appendChild(section(block));
    out.appendChild(details);
  }
  const left = doc.left_out || [];
  if (left.length) {
    const cut = node('ul', 'jpa-sp-left-out');
    for (const item of left)
      cut.appendChild(
        node(
          'li',
          '',
          `… ${Number(item.count).toLocaleString('en-US')} more ${item.kind} not shown`
        )
      );
    out.appendChild(cut);
  }
  for (const note of doc.notes || []) out.appendChild(node('p', 'jpa-sp-note', note));
  return out;
}

/**
 * Keep `box` at most `limit` pixels tall without a scroll bar of its own (a box scrolling
 * inside the notebook or the sidebar hides what it holds): when what it holds is taller, the
 * returned button, to be placed under it, shows the rest in place and folds it again.
 */
export function foldTall(box, limit) {
  const more = node('button', 'jpa-sp-more');
  more.type = 'button';
  more.setAttribute('data-testid', 'jpa-sp-more');
  more.hidden = true;
  let unfolded = false;
  function update() {
    box.style.maxHeight = unfolded ? 'none' : `${limit}px`;
    box.style.overflow = unfolded ? 'visible' : 'hidden';
    // The height of what the box holds, whatever the box shows of it.
    const tall = box.scrollHeight > limit + 1;
    more.hidden = !tall && !unfolded;
    box.classList.toggle('jpa-sp-folded-tall', tall && !unfolded);
    more.textContent = unfolded ? 'Show less of the preview' : 'Show the whole preview';
    more.setAttribute('aria-expanded', String(unfolded));
  }
  more.addEventListener('click', () => {
    unfolded = !unfolded;
    update();
    // Folding again keeps the preview's end in view, not a page further down.
    if (!unfolded && box.scrollIntoView) box.scrollIntoView({ block: 'nearest' });
  });
  // What the box holds changes (drawn, switched to text, laid out at another width).
  const sizes = typeof ResizeObserver === 'function' ? new ResizeObserver(update) : null;
  const watch = () => {
    if (!sizes) return;
    sizes.disconnect();
    for (const child of box.children) sizes.observe(child);
  };
  new MutationObserver(() => {
    watch();
    update();
  }).observe(box, { childList: true });
  watch();
  update();
  return more;
}
