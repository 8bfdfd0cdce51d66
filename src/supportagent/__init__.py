"""SupportAgent drafts grounded answers to support tickets for a human to review; it never sends."""

__version__ = "0.1.0"
