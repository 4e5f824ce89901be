"""benchledger: committed benchmark runs become a publication that shows every
figure with its spread, its environment, its receipts and its corrections."""

__version__ = "0.1.0"
