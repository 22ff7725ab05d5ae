"""Previews never freeze the notebook: every ready operation's card stays under 256 KiB.

Each operation is asked for with an input far larger than any card could show, in a real
kernel; the card the frontend receives (its whole synced state, including the view's code)
and the card's text form both stay under the limit, and the preview says what it left out.
"""

from __future__ import annotations

import json

import pytest

from tests.kernel.helpers import run

pytestmark = pytest.mark.kernel

#: The issue's bound for one card, in bytes on the wire.
CARD_LIMIT = 256 * 1024

SETUP = """
import subprocess, sys
from pathlib import Path
import jupyter_approvals.ops as ops
"""

HUGE_CALLS = {
    "file.write": """
Path('big.txt').write_text(''.join(f'line {i}\\n' for i in range(400_000)))
ops.write_file('big.txt', ''.join(f'LINE {i}\\n' for i in range(400_000)))
""",
    "file.delete": """
many = Path('many'); many.mkdir()
for i in range(5_000):
    (many / f'file-{i:05d}-{"x" * 60}.txt').write_text(str(i))
ops.delete_path('many', recursive=True)
""",
    "table.write": """
import pandas as pd
old = pd.DataFrame({'id': range(200_000), 'text': ['x' * 200] * 200_000})
old.to_csv('t.csv', index=False)
ops.write_table(old.assign(text='y' * 300, extra=1), 't.csv', key='id')
""",
    "sql.execute": """
import sqlite3
with sqlite3.connect('db.sqlite') as db:
    db.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)')
    db.executemany('INSERT INTO t VALUES (?, ?)', ((i, 'v') for i in range(50_000)))
db.close()
ops.execute_sql('sqlite:///db.sqlite',
                'DELETE FROM t WHERE id IN (' + ','.join(map(str, range(100_000))) + ')')
""",
    "shell.run": """
ops.run_command([sys.executable, '-c', 'pass'] + ['x' * 1_000] * 2_000)
""",
    "http.request": """
ops.http_request('POST', 'http://127.0.0.1:9/upload', body=b'x' * 50_000_000)
""",
    "git.commit": """
repo = Path('repo'); repo.mkdir()
git = lambda *a: subprocess.run(['git', '-C', 'repo', *a], check=True, capture_output=True)
git('init', '-q'); git('config', 'user.name', 'T'); git('config', 'user.email', 't@example.org')
for i in range(3_000):
    (repo / f'f{i:04d}-{"y" * 60}.txt').write_text('z\\n' * 20)
git('add', '.')
ops.git_commit('add ' + 'many files ' * 10_000, repo='repo')
""",
}


@pytest.mark.parametrize("action", sorted(HUGE_CALLS))
def test_a_huge_operation_shows_a_bounded_card(frontend, action):
    # Given a kernel with the ready operations
    run(frontend, SETUP)
    # When the operation is asked for with an input far larger than a card can show
    result = run(frontend, HUGE_CALLS[action])
    # Then it waits for a person, and what reaches the frontend stays under the limit
    assert result.ename == "ApprovalPending", result.evalue
    card = frontend.cards()[-1]
    assert card.state["action"] == action
    assert len(json.dumps(card.state).encode()) < CARD_LIMIT
    text = "\n".join(result.data())
    assert 0 < len(text.encode()) < CARD_LIMIT
    # And the preview says that it left something out (on a slow machine a table's rows are
    # not compared at all within the preview's time budget, and the preview says that instead)
    preview = card.state["preview"]
    announced = any(
        words in preview for words in ("not shown", "covered by the fingerprint", "not computed")
    )
    assert announced or card.state["preview_omitted"] > 0
