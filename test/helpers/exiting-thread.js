// A worker thread that ends at once, as a crashed one would: stands in for the SQLite checkpoint thread.
process.exit(3)
