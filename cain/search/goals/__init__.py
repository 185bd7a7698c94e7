"""The goal model the searches share: atoms, goals and goal-bags in compact form (`atoms`), the pairs that
split a goal-bag (`space`), and plans of pairs turned into programs (`plan`)."""
