-- The target table of the examples, for MariaDB or MySQL. Create it first, e.g.
--   mariadb -u app -p shop < examples/schema-mariadb.sql
-- or let txsink create it from the schema envelope (schema.create: missing;
-- txsink schema --config examples/pipeline.yaml prints the statement).
CREATE TABLE products (
  id       INT NOT NULL PRIMARY KEY,
  name     VARCHAR(100) NOT NULL,
  price    DECIMAL(10,2) NOT NULL,
  quantity INT NOT NULL,
  note     VARCHAR(200) NULL
) CHARACTER SET utf8mb4;
