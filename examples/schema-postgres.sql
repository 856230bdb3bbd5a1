-- The target table of the examples, for PostgreSQL. Create it first, e.g.
--   psql -d shop -f examples/schema-postgres.sql
-- or let txsink create it from the schema envelope (schema.create: missing;
-- txsink schema --config examples/pipeline.yaml prints the statement).
CREATE TABLE products (
  id       integer NOT NULL PRIMARY KEY,
  name     varchar(100) NOT NULL,
  price    numeric(10,2) NOT NULL,
  quantity integer NOT NULL,
  note     varchar(200)
);
