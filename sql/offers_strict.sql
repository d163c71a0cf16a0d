--
-- offers_strict: a document being written has only the fields its objects
-- define (docs/reference.md, Strict offers): a field that none defines is
-- refused with SQLSTATE 22023, the offer, the path and the field meant;
-- under incentives.unknown_offer_fields = 'warning' it is stored and
-- reported.  A percent above 100 is refused; what is legal but likely wrong
-- is a WARNING (docs/reference.md, Offer warnings).  The request of
-- incentives.calculate(jsonb) is strict the same way.
--
SET client_min_messages = warning;
DELETE FROM incentives.offers;
\set SHOW_CONTEXT never
\set std '{"offer_key":"s1","strategy_key":"standard","calculator_key":"percent_of_amount","periods":[{"key":"p","start_date":"2026-01-01","end_date":"2026-12-31"}],"incentives":[{"period_key":"p","transaction_type":"retailer_purchase","rates":[{"sku_key":"a","rate":3,"measure":"percent"}]}]}'
\set stepped '{"offer_key":"t1","strategy_key":"stepped","calculator_key":"percent_of_amount","periods":[{"key":"p","start_date":"2026-01-01","end_date":"2026-12-31"}],"incentive":{"filters":[{"period_key":"p","transaction_type":"retailer_purchase","sku_keys":["a"]}],"threshold_definition":{"type":"aggregated_amount","filters":[{"period_key":"p","transaction_type":"retailer_purchase","sku_keys":["a"]}]},"rates":[{"threshold":0,"value":1,"measure":"percent"},{"threshold":1000,"value":2,"measure":"percent"},{"threshold":5000,"value":3.5,"measure":"percent"}]}}'

-- A misspelling, a case, a plural, an abbreviation: the field meant.
SELECT incentives.offer_error(:'std'::jsonb || '{"enrolment": "required"}');
SELECT incentives.offer_error(:'std'::jsonb || '{"Enrollment": "required"}');
SELECT incentives.offer_error(:'std'::jsonb || '{"aggregaton": "group"}');
SELECT incentives.offer_error(:'std'::jsonb || '{"requirement": []}');
SELECT incentives.offer_error(:'std'::jsonb || '{"limits": {"max": 4000}}');
SELECT incentives.offer_error(:'std'::jsonb || '{"limits": {"Minimum": 10}}');
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{periods,0,start}', '"2026-01-01"'));
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{incentives,0,rates,0,rates}', '3'));
SELECT incentives.offer_error(jsonb_set(:'stepped'::jsonb, '{incentive,tier-mode}', '"incremental"'));
-- A field of another object says where it belongs.
SELECT incentives.offer_error(:'stepped'::jsonb || '{"tier_mode": "incremental"}');
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{periods,0,transaction_type}', '"retailer_purchase"'));
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{periods,0,metadata}', '{"source": "erp"}'));
-- No field to suggest: the object named.
SELECT incentives.offer_error(jsonb_set(:'stepped'::jsonb, '{incentive,rates,1,colour}', '"gold"'));
-- The request's objects are not an offer's: a request field is not suggested.
SELECT incentives.offer_error(:'std'::jsonb || '{"participant_key": "r1"}');

-- Annotations (label, description, name: strings, in any object) and the
-- offer's metadata (any JSON) are accepted and never change a figure.
SELECT incentives.offer_error(jsonb_set(jsonb_set(jsonb_set(:'std'::jsonb || '{"name": "Base", "description": "2026 base program", "metadata": {"owner": ["pm", 1]}}',
         '{periods,0,label}', '"Season"'), '{incentives,0,rates,0,description}', '"corn"'), '{incentives,0,name}', '"purchases"'));
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{incentives,0,rates,0,label}', '5'));

-- Characters beyond ASCII are the same bytes after the parse.
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb || '{"label": "Saison d''été €"}', '{incentives,0,rates,0,sku_key}', '"maïs_🌽"'));
SELECT sku_key FROM incentives_internal.offer_references(jsonb_set(:'std'::jsonb, '{incentives,0,rates,0,sku_key}', '"maïs_🌽"'))
 WHERE kind = 'sku';

-- A percent above 100 is refused; a dollar rate is not a percent.
SELECT incentives.offer_error(jsonb_set(:'std'::jsonb, '{incentives,0,rates,0,rate}', '150'));
SELECT incentives.offer_error(jsonb_set(jsonb_set(jsonb_set(:'std'::jsonb, '{calculator_key}', '"dollars_per_unit"'),
         '{incentives,0,rates,0,measure}', '"dollars"'), '{incentives,0,rates,0,rate}', '150'));
SELECT incentives.offer_error(jsonb_set(:'stepped'::jsonb, '{incentive,rates,2,value}', '100.5'));

-- Refused on insert (22023), with the message offer_error gives.
INSERT INTO incentives.offers (document) VALUES (:'std'::jsonb || '{"enrolment": "required"}');
\echo :SQLSTATE
SELECT count(*) FROM incentives.offers;

-- Legal but likely wrong: a WARNING per finding when stored (01000).
INSERT INTO incentives.offers (document) VALUES (jsonb_set(:'stepped'::jsonb, '{incentive,rates,2,value}', '35'));
INSERT INTO incentives.offers (document) VALUES (jsonb_set(jsonb_set(:'std'::jsonb, '{offer_key}', '"s_small"'), '{incentives,0,rates,0,rate}', '0.035'));
INSERT INTO incentives.offers (document) VALUES (jsonb_set(jsonb_set(:'stepped'::jsonb, '{offer_key}', '"t_jump"'), '{incentive,rates,2,value}', '9'));
-- A correct book says nothing.
INSERT INTO incentives.offers (document) VALUES (:'stepped'::jsonb || '{"offer_key": "t_ok"}');
INSERT INTO incentives.offers (document) VALUES (:'std');
SELECT offer_key, f.* FROM incentives.offers, incentives_internal.offer_findings(document) AS f ORDER BY 1, 2;

-- Under 'warning' a foreign document is stored, each unknown field a WARNING.
SET incentives.unknown_offer_fields = 'warning';
INSERT INTO incentives.offers (document)
VALUES (jsonb_set(:'std'::jsonb || '{"offer_key": "s_erp", "erp_id": 4711}', '{incentives,0,rates,0,Measure}', '"percent"'));
RESET incentives.unknown_offer_fields;
SELECT f.* FROM incentives.offers, incentives_internal.offer_findings(document) AS f
 WHERE offer_key = 's_erp' ORDER BY 1;
-- The stored fields, unchanged, never make a later edit fail; a new one does.
UPDATE incentives.offers SET document = jsonb_set(document, '{incentives,0,rates,0,rate}', '4') WHERE offer_key = 's_erp';
UPDATE incentives.offers SET document = document || '{"label": "ERP import"}' WHERE offer_key = 's_erp';
UPDATE incentives.offers SET document = document || '{"erp_id": 4712}' WHERE offer_key = 's_erp';
UPDATE incentives.offers SET document = document || '{"erp_batch": 1}' WHERE offer_key = 's_erp';
SELECT document -> 'incentives' -> 0 -> 'rates' -> 0 ->> 'rate' AS rate, document ->> 'label' AS label
  FROM incentives.offers WHERE offer_key = 's_erp';
-- offer_error answers for the stored offer the same way.
SELECT incentives.offer_error((SELECT document || '{"label": "x"}' FROM incentives.offers WHERE offer_key = 's_erp'));
-- Deleted and inserted again, its history still has the field.
DELETE FROM incentives.offers WHERE offer_key = 's_erp';
INSERT INTO incentives.offers (document)
SELECT v.document FROM incentives.offer_versions AS v WHERE v.offer_key = 's_erp' ORDER BY v.version DESC LIMIT 1;
SELECT count(*) FROM incentives.offers WHERE offer_key = 's_erp';
-- A stored document is calculated as it is: its unknown fields change nothing.
SELECT count(*) FROM incentives.incentive_calculate(offer_keys => ARRAY['s_erp']);

-- A restore session (pg_dump's output turns row_security and
-- check_function_bodies off; a parallel restore may write an offer before
-- its versions) stores what a write would refuse, each finding a WARNING.
SET row_security = off;
INSERT INTO incentives.offers (document)
VALUES (jsonb_set(:'std'::jsonb || '{"offer_key": "s_restored", "erp_id": 1}', '{incentives,0,rates,0,rate}', '150'));
RESET row_security;
SELECT count(*) FROM incentives.offers WHERE offer_key = 's_restored';

-- Every object and the fields it defines (docs/reference.md, Fields of every object).
SELECT object, string_agg(field, ', ' ORDER BY n) AS fields
  FROM incentives.offer_fields() WITH ORDINALITY AS f(object, field, n)
 GROUP BY object ORDER BY min(n);

-- The request of calculate(jsonb): its top level and its enrollments are
-- strict; its inline transactions may carry other fields.
SELECT incentives.calculate('{"participant_key": "r1", "include_store": true}');
SELECT incentives.calculate('{"participant_key": "r1", "offer_keys": ["s1"], "enrollments": [{"offer_key": "s1", "start_date": "2026-01-01", "stop_date": "2026-02-01"}]}');
SELECT incentives.calculate('{"participant_key": "r1", "offerkeys": ["s1"]}');
SELECT jsonb_pretty(incentives.calculate('{"participant_key": "r1", "offer_keys": ["s1"], "transactions": [{"transaction_id": "x1", "transaction_type": "retailer_purchase", "transaction_date": "2026-03-01", "sku_key": "a", "quantity": 1, "uom_key": "unit", "amount": 100, "erp_note": "from SAP"}]}') -> 'potential_earnings' -> 0 -> 'incentive_amount');
SET incentives.unknown_offer_fields = 'warning';
SELECT jsonb_array_length(incentives.calculate('{"participant_key": "r1", "offer_keys": ["s1"], "include_store": false}') -> 'potential_earnings');
RESET incentives.unknown_offer_fields;

DELETE FROM incentives.offers;
