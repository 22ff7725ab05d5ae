"""The approval store: requests, decisions and the single-use approvals they issue."""
