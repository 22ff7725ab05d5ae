"""The kernel side: the gate, the approval card, the comm endpoint and the magics."""
