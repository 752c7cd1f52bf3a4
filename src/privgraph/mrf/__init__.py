"""Private undirected graphical models (Markov random fields) from noisy clique marginals."""
