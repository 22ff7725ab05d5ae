"""What the ready operations share: refusals of bad arguments, optional packages, redaction of
secrets in what is shown, and the reading of a file's state that previews and fingerprints
both use."""
