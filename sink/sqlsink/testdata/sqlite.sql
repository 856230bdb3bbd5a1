-- upsert, one key column, 2 rows
INSERT INTO "orders" ("id","amount","status") VALUES (?,?,?),(?,?,?) ON CONFLICT ("id") DO UPDATE SET "amount"=excluded."amount","status"=excluded."status";

-- upsert, composite key, quoted names
INSERT INTO "shop"."order`items""x" ("order_id","line_no","qty") VALUES (?,?,?),(?,?,?) ON CONFLICT ("order_id","line_no") DO UPDATE SET "qty"=excluded."qty";

-- upsert, key columns only
INSERT INTO "shop"."order`items""x" ("order_id","line_no") VALUES (?,?) ON CONFLICT ("order_id","line_no") DO NOTHING;

-- guarded upsert, version column v last whatever its place
INSERT INTO "orders" ("id","v","amount") VALUES (?,?,?),(?,?,?) ON CONFLICT ("id") DO UPDATE SET "v"=excluded."v","amount"=excluded."amount" WHERE "orders"."v" IS NULL OR "orders"."v" <= excluded."v";

-- insert, 3 rows
INSERT INTO "orders" ("id","note") VALUES (?,?),(?,?),(?,?);

-- delete, one key column, 3 keys
DELETE FROM "orders" WHERE "id" IN (?,?,?);

-- delete, composite key, 2 keys
DELETE FROM "shop"."order`items""x" WHERE ("order_id","line_no") IN (VALUES (?,?),(?,?));

-- progress claim
INSERT INTO "txsink_progress" ("pipeline","source_partition","position","seq","epoch") VALUES (?,?,0,0,1) ON CONFLICT ("pipeline","source_partition") DO UPDATE SET "epoch"="txsink_progress"."epoch"+1;

-- progress advance, fenced by epoch
UPDATE "txsink_progress" SET "position"=?,"seq"=?,"position_mark"=?,"updated_at"=strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE "pipeline"=? AND "source_partition"=? AND "epoch"=?;

