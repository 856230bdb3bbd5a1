-- upsert, one key column, 2 rows
INSERT INTO "orders" ("id","amount","status") VALUES ($1,$2,$3),($4,$5,$6) ON CONFLICT ("id") DO UPDATE SET "amount"=EXCLUDED."amount","status"=EXCLUDED."status";

-- upsert, composite key, quoted names
INSERT INTO "shop"."order`items""x" ("order_id","line_no","qty") VALUES ($1,$2,$3),($4,$5,$6) ON CONFLICT ("order_id","line_no") DO UPDATE SET "qty"=EXCLUDED."qty";

-- upsert, key columns only
INSERT INTO "shop"."order`items""x" ("order_id","line_no") VALUES ($1,$2) ON CONFLICT ("order_id","line_no") DO NOTHING;

-- guarded upsert, version column v last whatever its place
INSERT INTO "orders" ("id","v","amount") VALUES ($1,$2,$3),($4,$5,$6) ON CONFLICT ("id") DO UPDATE SET "v"=EXCLUDED."v","amount"=EXCLUDED."amount" WHERE "orders"."v" IS NULL OR "orders"."v" <= EXCLUDED."v";

-- insert, 3 rows
INSERT INTO "orders" ("id","note") VALUES ($1,$2),($3,$4),($5,$6);

-- delete, one key column, 3 keys
DELETE FROM "orders" WHERE "id" IN ($1,$2,$3);

-- delete, composite key, 2 keys
DELETE FROM "shop"."order`items""x" WHERE ("order_id","line_no") IN (($1,$2),($3,$4));

-- progress claim
INSERT INTO "txsink_progress" ("pipeline","source_partition","position","seq","epoch") VALUES ($1,$2,0,0,1) ON CONFLICT ("pipeline","source_partition") DO UPDATE SET "epoch"="txsink_progress"."epoch"+1;

-- progress advance, fenced by epoch
UPDATE "txsink_progress" SET "position"=$1,"seq"=$2,"position_mark"=$3,"updated_at"=now() WHERE "pipeline"=$4 AND "source_partition"=$5 AND "epoch"=$6;

