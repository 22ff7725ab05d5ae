"""The Jupyter server extension: REST API for the sidebar, the journal and the doctor."""
