"""What previews flag as secret-looking (previews/secrets.py): files and lines."""

from __future__ import annotations

import pytest

from jupyter_approvals.previews.secrets import secret_looking_lines, secret_looking_path


@pytest.mark.parametrize(
    ("path", "what"),
    [
        (".env", "an environment file"),
        ("config/.env.production", "an environment file"),
        ("deploy/server.pem", "a key or certificate file"),
        ("home/.ssh/id_ed25519", "a private key"),
        ("home/.ssh/id_rsa_work", "a private key"),
        (".netrc", "a credentials file"),
        ("aws/credentials", "a credentials file"),
        ("keystore.p12", "a key store"),
    ],
)
def test_files_secrets_are_kept_in_are_named(path, what):
    # When a file name a secret is usually kept in is judged, Then it says what kind
    assert secret_looking_path(path) == what


@pytest.mark.parametrize(
    "path", [".env.example", "id_rsa.pub", "environment.yml", "keys.py", "README.md", "data.csv"]
)
def test_ordinary_files_are_not_flagged(path):
    assert secret_looking_path(path) is None


def test_lines_holding_keys_tokens_and_secret_assignments_are_counted():
    # Given lines of a diff: some hold secrets, some only speak of them
    lines = [
        "-----BEGIN OPENSSH PRIVATE KEY-----",
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        '"api_key": "9f8e7d6c5b4a"',
        "password: hunter2hunter2",
        "The API key lives in the vault.",
        "token: see",  # too short to be one
        "monkey = banana-bread",  # not a secret name
        "df.to_csv('keys.csv')",
    ]
    # When counted, Then exactly the five that hold one are
    assert secret_looking_lines(lines) == 5
