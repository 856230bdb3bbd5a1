-- The target table of the examples, for PostgreSQL. txsink does not create
-- target tables: create it first, e.g.
--   psql -d shop -f examples/schema-postgres.sql
CREATE TABLE products (
  id       integer NOT NULL PRIMARY KEY,
  name     varchar(100) NOT NULL,
  price    numeric(10,2) NOT NULL,
  quantity integer NOT NULL,
  note     varchar(200)
);
