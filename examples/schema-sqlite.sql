-- The target table of the examples, for SQLite. Create it first, e.g.
--   sqlite3 examples/example.db < examples/schema-sqlite.sql
-- or let txsink create it from the schema envelope (schema.create: missing;
-- txsink schema --config examples/pipeline.yaml prints the statement).
CREATE TABLE products (
  id       INTEGER NOT NULL PRIMARY KEY,
  name     TEXT NOT NULL,
  price    NUMERIC(10,2) NOT NULL,  -- txsink checks values against the declared precision and scale
  quantity INTEGER NOT NULL,
  note     TEXT
);
