"""The server's mirror of the kernels: their pending requests, sessions, journals."""
