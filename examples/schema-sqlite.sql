-- The target table of the examples, for SQLite. txsink does not create
-- target tables: create it first, e.g.
--   sqlite3 examples/example.db < examples/schema-sqlite.sql
CREATE TABLE products (
  id       INTEGER NOT NULL PRIMARY KEY,
  name     TEXT NOT NULL,
  price    NUMERIC(10,2) NOT NULL,  -- txsink checks values against the declared precision and scale
  quantity INTEGER NOT NULL,
  note     TEXT
);
