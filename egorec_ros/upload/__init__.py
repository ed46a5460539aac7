"""Shipping committed episodes to the collection server (issue 22): the single-episode slice
(``slice``), a persistent SQLite queue in the recordings root (``queue``), the server's HTTP
contract (``client``), and the loop that sends the queue exactly once (``uploader``)."""
