"""What the SQL tests share: a real SQLite database file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A real SQLite file: 10 orders, 4 of them cancelled, and an empty archive table."""
    path = tmp_path / "shop.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT, amount INTEGER)")
        db.executemany(
            "INSERT INTO orders (status, amount) VALUES (?, ?)",
            [("cancelled" if i % 3 == 0 else "open", i * 10) for i in range(10)],
        )
        db.execute("CREATE TABLE archive (id INTEGER, status TEXT, amount INTEGER)")
    db.close()
    return path
