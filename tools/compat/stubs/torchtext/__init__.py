"""Stand-in for torchtext's legacy API (torchtext 0.9-0.11's ``torchtext.legacy``, which the
installed torchtext no longer has, and the Multi30k download): see legacy/."""
