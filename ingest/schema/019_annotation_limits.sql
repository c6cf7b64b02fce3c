-- gymlens warehouse, schema version 19: the limits of an annotation
-- queue, stored with it: how many annotators it takes answers from (a
-- queue made before gets the default, 1,000) and whether an item takes
-- answers from more than k annotators. Nothing the run inputs come from
-- changes:
-- keeps the run inputs
ALTER TABLE annotation_queues ADD COLUMN max_annotators INTEGER DEFAULT 1000;
ALTER TABLE annotation_queues ADD COLUMN over_assign BOOLEAN DEFAULT false;
