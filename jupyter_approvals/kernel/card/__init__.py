"""The approval card: the widget, the cards of one kernel, and what a card says in words."""
