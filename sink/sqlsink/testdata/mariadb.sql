-- upsert, one key column, 2 rows
INSERT INTO `orders` (`id`,`amount`,`status`) VALUES (?,?,?),(?,?,?) ON DUPLICATE KEY UPDATE `amount`=VALUES(`amount`),`status`=VALUES(`status`);

-- upsert, composite key, quoted names
INSERT INTO `shop`.`order``items"x` (`order_id`,`line_no`,`qty`) VALUES (?,?,?),(?,?,?) ON DUPLICATE KEY UPDATE `qty`=VALUES(`qty`);

-- upsert, key columns only
INSERT INTO `shop`.`order``items"x` (`order_id`,`line_no`) VALUES (?,?) ON DUPLICATE KEY UPDATE `order_id`=VALUES(`order_id`);

-- guarded upsert, version column v last whatever its place
INSERT INTO `orders` (`id`,`v`,`amount`) VALUES (?,?,?),(?,?,?) ON DUPLICATE KEY UPDATE `amount`=IF(`v` IS NULL OR VALUES(`v`) >= `v`, VALUES(`amount`), `amount`),`v`=IF(`v` IS NULL OR VALUES(`v`) >= `v`, VALUES(`v`), IF((@txsink_refused := @txsink_refused + 1) IS NULL, `v`, `v`));

-- insert, 3 rows
INSERT INTO `orders` (`id`,`note`) VALUES (?,?),(?,?),(?,?);

-- delete, one key column, 3 keys
DELETE FROM `orders` WHERE `id` IN (?,?,?);

-- delete, composite key, 2 keys
DELETE FROM `shop`.`order``items"x` WHERE (`order_id`,`line_no`) IN ((?,?),(?,?));

-- progress claim
INSERT INTO `txsink_progress` (`pipeline`,`source_partition`,`position`,`seq`,`epoch`) VALUES (?,?,0,0,1) ON DUPLICATE KEY UPDATE `epoch`=`epoch`+1;

-- progress advance, fenced by epoch
UPDATE `txsink_progress` SET `position`=?,`seq`=?,`position_mark`=? WHERE `pipeline`=? AND `source_partition`=? AND `epoch`=?;

